// `make bench ARGS=newcontext`: what a page new to a workspace costs on raw Chromium with the
// service's switches (chromiumArgs), beside a warm page's render of the same page: opening a
// context and its page (what a spare costs, off the path), then the first navigation and capture
// on it (what a render that takes a spare still pays), alternated one by one with a warm page's
// navigation and capture. Wall ms (p50) and Chromium's CPU ms (every process, mean) per step.

import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { DEFAULT_CHROMIUM_PATH } from '../src/config.ts';
import { chromiumArgs } from '../src/render/browser/chromium.ts';
import { chromiumKind, cpuMs, findProcess, listProcesses, median, percentile, processTree } from './measure.ts';
import { startBenchSite } from './site.ts';

const CHROMIUM = process.env.CHROMIUM_PATH || DEFAULT_CHROMIUM_PATH;
const ROUNDS = Number(process.env.BENCH_SHOTS) || 30;

/** One step's figures over the rounds. */
export interface StepCost {
  wallP50: number;
  cpuMs: number;
  /** CPU ms by kind of process (browser, renderer, gpu, the rest). */
  byKind: Record<string, number>;
  /** Renderer processes started during the step, a round. */
  renderers: number;
}

/** The raw costs: each step's, and what a new page adds to a render over a warm page's. */
export interface NewContextCost {
  steps: Record<string, StepCost>;
  /** Opening + first render − a warm render: wall (p50s) and CPU ms. */
  extra: { wallMs: number; cpuMs: number };
}

const WARM = 'warm page: navigate + png + about:blank';
const OPEN = 'new context + page (a spare)';
const FIRST = 'first navigate + png on it';
const CLOSE = 'close the context';
// The kinds of process whose CPU is shown apart; the others' is summed as "other".
const KINDS = ['browser', 'renderer', 'gpu'];

/** Measures the steps in `rounds` alternated rounds on a browser of its own. */
export async function measureNewContext(url: string, rounds = ROUNDS): Promise<NewContextCost> {
  const marker = `--shutterbus-bench=${randomUUID()}`;
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: [...chromiumArgs(), marker] });
  const root = findProcess([marker]);
  const samples: Record<
    string,
    { wall: number[]; cpu: number[]; renderers: number[]; byKind: Record<string, number> }
  > = {};
  const step = async (name: string, work: () => Promise<unknown>) => {
    const before = snapshot(root);
    const started = performance.now();
    await work();
    const wall = performance.now() - started;
    const after = snapshot(root);
    samples[name] ??= { wall: [], cpu: [], renderers: [], byKind: {} };
    const { byKind } = samples[name];
    let cpu = 0;
    let renderers = 0;
    for (const [pid, { ms, kind }] of after) {
      const used = ms - (before.get(pid)?.ms ?? 0);
      const group = KINDS.includes(kind) ? kind : 'other';
      byKind[group] = (byKind[group] ?? 0) + used;
      cpu += used;
      if (!before.has(pid) && kind === 'renderer') renderers += 1;
    }
    samples[name].wall.push(wall);
    samples[name].cpu.push(cpu);
    samples[name].renderers.push(renderers);
  };
  try {
    const warm = await openPage(browser);
    // Both sides once before measuring: the site's first answers and the browser's first renderer.
    await render(warm.page, url);
    await render((await openPage(browser)).page, url);
    for (let round = 0; round < rounds; round++) {
      await step(WARM, () => render(warm.page, url));
      let opened: { context: BrowserContext; page: Page } | undefined;
      await step(OPEN, async () => (opened = await openPage(browser)));
      await step(FIRST, () => render(opened!.page, url));
      await step(CLOSE, () => opened!.context.close());
      // The closed context's renderer exits meanwhile, not during the next round's steps.
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } finally {
    await browser.close();
  }
  const steps: Record<string, StepCost> = {};
  for (const [name, { wall, cpu, renderers, byKind }] of Object.entries(samples)) {
    const mean = (values: number[]) => values.reduce((sum, v) => sum + v, 0) / values.length;
    steps[name] = {
      wallP50: percentile(wall, 50),
      cpuMs: mean(cpu),
      byKind: Object.fromEntries(Object.entries(byKind).map(([kind, ms]) => [kind, ms / wall.length])),
      renderers: median(renderers),
    };
  }
  return {
    steps,
    extra: {
      wallMs: steps[OPEN].wallP50 + steps[FIRST].wallP50 - steps[WARM].wallP50,
      cpuMs: steps[OPEN].cpuMs + steps[FIRST].cpuMs - steps[WARM].cpuMs,
    },
  };
}

/** The rows as printed. */
export function newContextLines(cost: NewContextCost): string[] {
  return [
    `${'a new page, raw Chromium (service switches)'.padEnd(44)} ${'wall p50 ms'.padStart(11)} ${'CPU ms'.padStart(7)}  browser / renderer / gpu / other  ${'renderers'.padStart(9)}`,
    ...Object.entries(cost.steps).map(
      ([name, s]) =>
        `${`  ${name}`.padEnd(44)} ${s.wallP50.toFixed(1).padStart(11)} ${s.cpuMs.toFixed(1).padStart(7)}  ${[
          ...KINDS,
          'other',
        ]
          .map((kind) => (s.byKind[kind] ?? 0).toFixed(0))
          .join(' / ')
          .padEnd(33)} ${String(s.renderers).padStart(9)}`,
    ),
    `a new page's render over a warm page's: +${cost.extra.wallMs.toFixed(0)} ms wall, +${cost.extra.cpuMs.toFixed(0)} ms of Chromium's CPU`,
  ];
}

// A context and page as the pool opens them (src/render/browser/pool.ts), with a CDP session.
async function openPage(browser: Browser): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({
    viewport: { width: 1280, height: 720 },
    acceptDownloads: false,
    serviceWorkers: 'block',
  });
  const page = await context.newPage();
  await context.newCDPSession(page);
  return { context, page };
}

// A light render as the service makes one: navigate, capture, and back to about:blank (the wipe).
async function render(page: Page, url: string): Promise<void> {
  await page.goto(url, { waitUntil: 'load' });
  await page.screenshot({ type: 'png' });
  await page.goto('about:blank');
}

// Every process of the browser's tree now: its CPU so far and its kind.
function snapshot(root: number | null): Map<number, { ms: number; kind: string }> {
  const processes = listProcesses();
  const byPid = new Map(processes.map((proc) => [proc.pid, proc]));
  const result = new Map<number, { ms: number; kind: string }>();
  if (root === null) return result;
  for (const pid of processTree([root], processes)) {
    const ms = cpuMs(pid);
    const proc = byPid.get(pid);
    if (ms !== null && proc) result.set(pid, { ms, kind: chromiumKind(proc) });
  }
  return result;
}

if (import.meta.url === `file://${process.argv[1]}` || process.argv[2] === 'newcontext') {
  const site = await startBenchSite();
  try {
    const light = await measureNewContext(site.light);
    const heavy = await measureNewContext(site.heavy);
    process.stdout.write(
      `New page cost, ${os.cpus().length} CPUs, ${new Date().toISOString()}, ${ROUNDS} rounds\n\nlight page\n${newContextLines(light).join('\n')}\n\nheavy page\n${newContextLines(heavy).join('\n')}\n`,
    );
  } finally {
    await site.close();
  }
}
