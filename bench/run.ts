// `make bench`: Shutterbus end to end beside a raw Playwright loop on the same pages, and its HTTP
// answers beside a bare Fastify route, all in one run on this machine. Writes bench/results/latest.json.
// `make bench ARGS=soak` runs the soak instead (bench/soak.ts), `ARGS=profile` the CPU profile (bench/profile.ts),
// `ARGS=nats` what one render costs NATS (bench/nats-run.ts), `ARGS=png` Chromium's PNG encoding with and without its fast path (bench/png-speed.ts), `ARGS=tenants`
// the many-workspace rows alone on a stack of their own (bench/tenants-run.ts), `ARGS=animate` the
// animation rows (bench/animate-run.ts), `ARGS=cold` the start on a cold file cache (bench/cold-run.ts),
// `ARGS=compare` a monitor's comparison of two 1280 × 4000 captures, before and after pixelmatch (bench/monitor-compare.ts),
// `ARGS=pdf` the PDF rows (bench/pdf-run.ts),
// `ARGS=image` the production image's size and start (bench/image-run.ts), `ARGS=mix` the
// production-like mix alone (bench/mix-run.ts), `ARGS=fullpage` the full-page rows
// (bench/fullpage-run.ts), `ARGS=sizing` the mix and the round-robin at four memory budgets (bench/sizing.ts),
// `ARGS=newcontext` what a page new to a workspace costs on raw Chromium (bench/new-context.ts).

import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Page } from 'playwright-core';
import { DEFAULT_CHROMIUM_PATH } from '../src/config.ts';
import { defaultRenderMemoryBudgetMb } from '../src/machine.ts';
import { hmacHex } from '../src/signing.ts';
import {
  CpuMeter,
  hammerRounds,
  labelTree,
  loop,
  median,
  medianLoop,
  perShot,
  pssMb,
  roundsRatio,
  turned,
  type LoopResult,
} from './measure.ts';
import { startBenchSite } from './site.ts';
import { measureRules } from './blocking.ts';
import { animationLines, measureAnimations } from './animate.ts';
import { measurePdfs, pdfLines } from './pdf.ts';
import { startBenchStack } from './stack.ts';
import { measureNatsCost, natsCostLines } from './nats-ops.ts';
import { kvTurnsLines, measureKvTurns } from './kv-turns.ts';
import { coldStartLine, measureColdStarts } from './cold.ts';
import { imageLines, measureImage } from './image.ts';
import { fullPageLines, measureFullPage } from './fullpage.ts';
import { measureMix, mixLines, ONE, ZIPF } from './mix.ts';
import {
  alternate,
  measureRawRoundRobin,
  measureTenants,
  rawRoundRobinLine,
  startTraceSink,
  tenantLines,
} from './tenants.ts';

const mode = process.argv[2];
if (
  mode === 'soak' ||
  mode === 'profile' ||
  mode === 'png' ||
  mode === 'tenants' ||
  mode === 'animate' ||
  mode === 'cold' ||
  mode === 'compare' ||
  mode === 'nats' ||
  mode === 'pdf' ||
  mode === 'image' ||
  mode === 'mix' ||
  mode === 'fullpage' ||
  mode === 'sizing' ||
  mode === 'newcontext'
) {
  await import(
    {
      soak: './soak.ts',
      profile: './profile.ts',
      png: './png-speed.ts',
      tenants: './tenants-run.ts',
      animate: './animate-run.ts',
      cold: './cold-run.ts',
      compare: './monitor-compare.ts',
      nats: './nats-run.ts',
      pdf: './pdf-run.ts',
      image: './image-run.ts',
      mix: './mix-run.ts',
      fullpage: './fullpage-run.ts',
      sizing: './sizing.ts',
      newcontext: './new-context.ts',
    }[mode]
  );
  process.exit(0);
}
if (mode !== undefined) {
  process.stderr.write(
    `usage: make bench [ARGS=soak|profile|png|tenants|animate|cold|compare|nats|pdf|image|mix|fullpage|sizing|newcontext] (got ${JSON.stringify(mode)})\n`,
  );
  process.exit(2);
}

const CHROMIUM = process.env.CHROMIUM_PATH || DEFAULT_CHROMIUM_PATH;
const FULL_CHROMIUM = '/usr/lib/chromium/chromium';
const SHOTS = { count: 40, maxSeconds: 20 };
// Shots made before anything is measured, by the service and by baseline B's client alike: V8
// optimizes a function only after hundreds of its calls, and a process's first ~500 shots cost the
// service ≈ 1.5× a shot of one that has run for a while (docs/performance.md, "A young process").
// Both sides are measured as they run for hours; the service's warm-up is shown as a row of its own.
const WARMUP = { service: { count: 500, concurrency: 2 }, client: { count: 200, concurrency: 1 } };
// Eight interleaved rounds of 2 s per URL (bench/measure.ts, hammerRounds): the host moves a
// round's rate by ±30 %, and a ratio is the median of eight rounds' ratios rather than of four.
const HAMMER_ROUNDS = 8;
const HAMMER_SECONDS = 2;
const results: Record<string, unknown> = {
  machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model },
  at: new Date().toISOString(),
};
const log = (line: string) => process.stderr.write(`${line}\n`);

const site = await startBenchSite();
const pages = { light: site.light, heavy: site.heavy };

// The stack: real NATS, the s3rver store, the service as a child process. Started and measured idle
// before the baselines' Chromium runs: PSS splits a page shared between processes among them, and
// the baselines' browser maps the same Chromium binary, which would halve the stack's share of it.
log('stack: nats, s3rver, shutterbus');
const stack = await startBenchStack(site);
const { base, workspace } = stack;
const take = async (url: string) => {
  const response = await fetch(`${base}/api/take?url=${encodeURIComponent(url)}`, {
    headers: { 'x-access-key': workspace.access_key },
  });
  const bytes = await response.arrayBuffer();
  if (response.status !== 200 || bytes.byteLength < 1000) throw new Error(`take answered ${response.status}`);
};
await take(site.light);
// To 10 ms, as the cold starts' median: a target is met or not on the figure the table shows.
const firstShotSeconds = Math.round((performance.now() - stack.spawnedAt) / 10) / 100;
const stackPids = stack.pids;
await new Promise((resolve) => setTimeout(resolve, 3000));
const idleMb = pssMb(stackPids());

// One render of `url` with `params` (repeated keys for a list); any 200 with a body counts.
const takeWith = async (url: string, params: Record<string, string>) => {
  const search = new URLSearchParams({ url, ...params });
  const response = await fetch(`${base}/api/take?${search}`, { headers: { 'x-access-key': workspace.access_key } });
  const bytes = await response.arrayBuffer();
  if (response.status !== 200 || bytes.byteLength === 0)
    throw new Error(`take answered ${response.status}: ${Buffer.from(bytes).toString().slice(0, 200)}`);
};
// The same idle stack once a render has loaded every rule engine (the light page, every switch on).
await takeWith(site.light, { block_ads: 'true', block_trackers: 'true', block_annoyances: 'true' });
await new Promise((resolve) => setTimeout(resolve, 3000));
const idleWithRulesMb = pssMb(stackPids());

// Baselines: the obvious loop (a fresh context per shot) and the browser's limit (one page reused).
log('baselines: raw Playwright');
const browser = await chromium.launch({ executablePath: CHROMIUM });
const rawShot = async (page: Page, url: string) => {
  await page.goto(url, { waitUntil: 'load' });
  await page.screenshot({ type: 'png' });
};
const baselineA: Record<string, LoopResult> = {};
const baselineB: Record<string, LoopResult> = {};
// Baseline B's CPU per shot, measured like the service's: the bench process (Playwright's client) and its Chromium.
const baselineCpu: Record<string, Record<string, number>> = {};
const benchLabels = () =>
  new Map([...labelTree([process.pid])].map(([pid, label]) => [pid, label === 'service' ? 'client' : label]));
/** One baseline B loop on `url` in `on`, with its CPU per shot. */
const measureB = async (url: string, on = browser) => {
  const context = await on.newContext({ viewport: { width: 1280, height: 720 } });
  const page = await context.newPage();
  let shots = 0;
  const meter = new CpuMeter(benchLabels).start();
  const result = await loop(
    async () => {
      await rawShot(page, url);
      shots++;
    },
    { concurrency: 1, ...SHOTS },
  );
  const cpu = perShot({}, meter.stop(), shots);
  await context.close();
  return { result, cpu };
};
{
  // Baseline B's client warmed up as the service is below (WARMUP), on a page of its own.
  const context = await browser.newContext({ viewport: { width: 1280, height: 720 } });
  const page = await context.newPage();
  await loop(() => rawShot(page, site.light), { ...WARMUP.client, maxSeconds: 120, warmup: 0 });
  await context.close();
}
for (const [name, url] of Object.entries(pages)) {
  baselineA[name] = await loop(
    async () => {
      const context = await browser.newContext({ viewport: { width: 1280, height: 720 } });
      await rawShot(await context.newPage(), url);
      await context.close();
    },
    { concurrency: 1, ...SHOTS },
  );
  ({ result: baselineB[name], cpu: baselineCpu[name] } = await measureB(url));
}
// The same loop in Debian's full Chromium, beside the headless shell the service and B run.
const fullChromium = await chromium.launch({ executablePath: FULL_CHROMIUM }).catch(() => null);
const fullB = fullChromium && (await measureB(site.light, fullChromium));
await fullChromium?.close();

// End to end through HTTP, JetStream, the actor and the bucket, with the CPU every process of the
// stack spends on it (from /proc; each loop's own two warm-up shots included in both the CPU and
// the shot count).
// Baseline B runs in the same rounds, alternated with the stack's loops (the order turned each
// round): on a shared machine the load moves between minutes (B's own loop has read 7.9 and 9.2
// shots/s a few minutes apart in one run), so the ratio to B is taken within each round, each
// round's best loop over its B, and the rounds' median is the figure.
log('end to end: /api/take');
// The service's warm-up (WARMUP): its CPU a shot is shown, not counted in the e2e rows.
const warmupMeter = new CpuMeter(stack.labels).start();
const warmup = await loop(() => take(site.light), { ...WARMUP.service, maxSeconds: 180, warmup: 0 });
const warmupCpu = perShot({}, warmupMeter.stop(), warmup.shots);
const E2E_ROUNDS = 3;
const e2eRounds: Record<string, LoopResult[]> = {};
const baselineBRounds: Record<string, LoopResult[]> = { light: [], heavy: [] };
const vsB: Record<string, number[]> = { light: [], heavy: [] };
let loadMb = 0;
// Every 2 s: the kernel walks each process's page tables to answer smaps_rollup, and sampled every
// 500 ms the reading cost the heavy loop at c=2 ≈ 12% of its throughput (docs/performance.md).
// Only while the stack's own loops run: B's are left undisturbed.
let stackLoopRunning = false;
const sampler = setInterval(() => stackLoopRunning && (loadMb = Math.max(loadMb, pssMb(stackPids()))), 2000);
const e2eMeter = new CpuMeter(stack.labels).start();
const e2eCpu: Record<string, Record<string, number>> = {};
const e2eShots = { light: 0, heavy: 0 };
// The stack's CPU during its own loops only, not the idle stack's while B runs, by page.
const e2eCpuUsed: Record<string, Record<string, number>> = { light: {}, heavy: {} };
for (const name of Object.keys(pages) as (keyof typeof pages)[]) {
  for (let round = 0; round < E2E_ROUNDS; round++) {
    const inRound: Record<string, LoopResult> = {};
    for (const side of turned(['B', 'c1', 'c2', 'c4'], round)) {
      if (side === 'B') {
        inRound.B = (await measureB(pages[name])).result;
        continue;
      }
      const concurrency = Number(side.slice(1));
      const before = e2eMeter.read();
      stackLoopRunning = true;
      inRound[side] = await loop(
        async () => {
          await take(pages[name]);
          e2eShots[name]++;
        },
        { concurrency, ...SHOTS, count: SHOTS.count * concurrency },
      );
      stackLoopRunning = false;
      for (const [label, ms] of Object.entries(e2eMeter.read()))
        e2eCpuUsed[name][label] = (e2eCpuUsed[name][label] ?? 0) + ms - (before[label] ?? 0);
    }
    baselineBRounds[name].push(inRound.B);
    for (const side of ['c1', 'c2', 'c4']) (e2eRounds[`${name}_${side}`] ??= []).push(inRound[side]);
    vsB[name].push(Math.max(inRound.c1.perSecond, inRound.c2.perSecond, inRound.c4.perSecond) / inRound.B.perSecond);
  }
  e2eCpu[name] = perShot({}, e2eCpuUsed[name], e2eShots[name]);
}
e2eMeter.stop();
const e2eCpuAll: Record<string, number> = {};
for (const used of Object.values(e2eCpuUsed))
  for (const [label, ms] of Object.entries(used)) e2eCpuAll[label] = (e2eCpuAll[label] ?? 0) + ms;
e2eCpu.all = perShot({}, e2eCpuAll, e2eShots.light + e2eShots.heavy);
clearInterval(sampler);
// Each loop's median round (its rate, and the medians of its p50 and p95), and the ratios to B.
const e2e = Object.fromEntries(Object.entries(e2eRounds).map(([name, loops]) => [name, medianLoop(loops)]));
const baselineBInRounds = Object.fromEntries(
  Object.entries(baselineBRounds).map(([name, loops]) => [name, medianLoop(loops)]),
);
const ratioToB = Object.fromEntries(Object.entries(vsB).map(([name, ratios]) => [name, median(ratios)]));
// Chromium's own cost of round-robin over many pages, for the many-workspace rows below.
const rawRoundRobin = await measureRawRoundRobin(browser, site.light, { rounds: 3, shots: 48 });
// Full pages of 5,000 px, with and without the scroll, beside a raw Playwright full-page loop.
log('full pages: 1280 × 5,000 px');
const fullPages = await measureFullPage(stack, site, browser, { rounds: 3, shots: 8, maxSeconds: 30 });
await browser.close();

// Blocking on the ad-heavy page, then the stack's idle memory with the rule engines loaded.
log('blocking: the ad-heavy page');
const takeBlocking = (params: Record<string, string>) => takeWith(site.ads, params);
const blockingOptions: Record<string, Record<string, string>> = {
  none: {},
  block_ads: { block_ads: 'true' },
  block_annoyances: { block_annoyances: 'true' },
  'block_ads + annoyances': { block_ads: 'true', block_annoyances: 'true' },
};
const blocking: Record<string, LoopResult> = {};
for (const [name, params] of Object.entries(blockingOptions)) {
  blocking[name] = await loop(() => takeBlocking(params), { concurrency: 1, count: 15, maxSeconds: 25 });
}
const rules = await measureRules();

// What each option family and each format costs on the light page, beside a plain png in the same loop.
log('options and formats: the light page');
const variantOptions: Record<string, Record<string, string>> = {
  'plain png': {},
  'emulation: dark, zone, ua, geo': {
    dark_mode: 'true',
    time_zone: 'Asia/Tokyo',
    user_agent: 'Mozilla/5.0 Bench',
    geolocation_latitude: '35.6',
    geolocation_longitude: '139.7',
  },
  'device iphone_13 (mobile, 3×)': { viewport_device: 'iphone_13' },
  'request: headers, cookies': { headers: 'X-Bench: 1', cookies: 'bench=1' },
  'page: styles, hide, scripts': {
    styles: 'h1 { color: teal }',
    hide_selectors: 'footer',
    scripts: 'document.title = "bench"',
  },
  'wait_until networkidle0': { wait_until: 'networkidle0' },
  // Still captures (docs/capture.md): the page held still, parts masked or removed.
  disable_animations: { disable_animations: 'true' },
  'mask_selectors, remove_selectors': { mask_selectors: 'h1', remove_selectors: 'footer' },
  'save_formats html': { save_formats: 'html', response_type: 'json' },
  'full_page (scroll on)': { full_page: 'true' },
  'metadata: title, og, icon, fonts': {
    metadata_page_title: 'true',
    metadata_open_graph: 'true',
    metadata_icon: 'true',
    metadata_fonts: 'true',
    response_type: 'json',
  },
  ...Object.fromEntries(
    ['jpeg', 'webp', 'gif', 'avif', 'tiff', 'pdf', 'html', 'markdown', 'mhtml'].map((format) => [
      `format ${format}`,
      { format },
    ]),
  ),
  // Uploaded to a bucket of the stack's own local store (docs/storage.md), with its keys in the request.
  'store=true to a local bucket': {
    store: 'true',
    storage_path: 'bench/store',
    storage_endpoint: stack.s3.endpoint,
    storage_bucket: 'shutterbus-bench',
    storage_access_key_id: stack.s3.accessKey,
    storage_secret_access_key: stack.s3.secretKey,
  },
};
const variants: Record<string, LoopResult> = {};
for (const [name, params] of Object.entries(variantOptions)) {
  variants[name] = await loop(() => takeWith(site.light, params), { concurrency: 1, count: 12, maxSeconds: 15 });
}
// The app-shell page: its 4,600 px scroller scrolled through and let out into one full-page capture.
variants['full_page app shell (4,600 px scroller)'] = await loop(() => takeWith(site.appShell, { full_page: 'true' }), {
  concurrency: 1,
  count: 12,
  maxSeconds: 15,
});

// Animations: a scrolling mp4 and gif, and a recording's effect on plain screenshots beside it.
log('animations: /api/animate');
const animations = await measureAnimations(stack, site.heavy, site.light);

// PDFs: a plain PDF, a PDF/A-2b and a 10-source merge of the heavy page, side by side.
log('pdfs: plain, PDF/A-2b, a merge of 10');
const pdfs = await measurePdfs(stack, site.heavy);

// Many workspaces: the light page at c=4 for one workspace, 24 round-robin and a Zipf-like mix over
// 200, interleaved in rounds on this stack, with its memory during each loop.
log('many workspaces: the light page at c=4');
const tenants = await measureTenants(stack, site.light, { rounds: 5, shots: 120, maxSeconds: 15 });
// The production-like mix (bench/mix.ts) at c = 2 × CPUs: one workspace beside 200 by Zipf.
log('the mix: one workspace and 200 by Zipf');
const mix = await measureMix(stack, site, { rounds: 5, shots: 120, maxSeconds: 30 });

// Tracing: a plain png on a second stack whose service exports spans to a local OTLP sink, in
// rounds alternated with the plain png on this one (tracing off).
log('tracing: a plain png with spans exported to a local sink');
const sink = await startTraceSink();
const tracedStack = await startBenchStack(site, { OTEL_EXPORTER_OTLP_ENDPOINT: sink.url });
const takeOn = async (target: typeof stack) => {
  const response = await fetch(`${target.base}/api/take?url=${encodeURIComponent(site.light)}`, {
    headers: { 'x-access-key': target.workspace.access_key },
  });
  const bytes = await response.arrayBuffer();
  if (response.status !== 200 || bytes.byteLength < 1000) throw new Error(`take answered ${response.status}`);
};
const tracing = await alternate(
  { 'tracing off': () => takeOn(stack), 'tracing on (OTLP to a local sink)': () => takeOn(tracedStack) },
  3,
  { concurrency: 1, count: 15, maxSeconds: 10 },
);
await tracedStack.stop();
const tracePosts = sink.posts();
await sink.close();

// HTTP: cached signed redirects and 401 rejections, beside a bare Fastify route in its own process,
// from the one-process stack and from an ingress-only process on the same NATS and store (ROLES=ingress,
// as infra/production deploys it: no render ever ran there, so Playwright's AsyncLocalStorage is off).
log('http: autocannon');
const query = `access_key=${workspace.access_key}&url=${encodeURIComponent(site.light)}`;
const signedPath = `/api/take?${query}&signature=${hmacHex(workspace.secret_key, query)}`;
const ingress = await stack.startIngress();
// The first view renders (or finds the file); the next one through each process is a repeat view.
const viewTwice = async (url: string) => {
  let status = 0;
  for (let view = 0; view < 2; view++) {
    const response = await fetch(url, { redirect: 'manual' });
    await response.arrayBuffer();
    status = response.status;
  }
  return status;
};
const redirects =
  (await viewTwice(`${base}${signedPath}`)) === 302 && (await viewTwice(`${ingress.base}${signedPath}`)) === 302;
const bare = spawn(process.execPath, ['--import', 'tsx', path.join(import.meta.dirname, 'bare.ts')], {
  stdio: ['ignore', 'pipe', 'inherit'],
});
const bareUrl = await new Promise<string>((resolve) =>
  bare.stdout!.once('data', (chunk: Buffer) => resolve(chunk.toString().trim())),
);
const badKey = { headers: { 'x-access-key': 'not-a-key' } };
const measured = await hammerRounds(
  {
    bare: { url: `${bareUrl}/bare` },
    rejected: { url: `${ingress.base}/api/take?url=${encodeURIComponent(site.light)}`, ...badKey },
    redirect: { url: `${ingress.base}${signedPath}` },
    rejectedOneProcess: { url: `${base}/api/take?url=${encodeURIComponent(site.light)}`, ...badKey },
    redirectOneProcess: { url: `${base}${signedPath}` },
  },
  HAMMER_ROUNDS,
  HAMMER_SECONDS,
);
const http = {
  ...measured,
  redirect: redirects ? measured.redirect : null,
  redirectOneProcess: redirects ? measured.redirectOneProcess : null,
};
bare.kill('SIGTERM');
await ingress.stop();
// What one render costs NATS, from nats-server's own counters (the sizing of docs/operations.md).
log('nats: messages and KV writes per render');
const natsCost = await measureNatsCost(stack, site.light);
const kvTurns = await measureKvTurns();
log('cold starts: the file cache evicted before each');
const cold = await measureColdStarts(stack, site.light);
await stack.stop();
await site.close();
log('the production image: its size and start → first screenshot');
const image = await measureImage();

// The table: every figure beside its baseline, and the targets of issues 6 and 18.
const bestOf = (page: string) =>
  Object.entries(e2e)
    .filter(([name]) => name.startsWith(`${page}_`))
    .sort((a, b) => b[1].perSecond - a[1].perSecond)[0];
const best = bestOf('light');
const bestHeavy = bestOf('heavy');
const ratio = (a: number, b: number) => Math.round((a / b) * 100) / 100;
// CPU ms per shot of one group of processes: the service's Node processes, or all of Chromium's.
const chromiumMs = (cpu: Record<string, number>) =>
  Math.round(
    Object.entries(cpu)
      .filter(([label]) => label.startsWith('chromium'))
      .reduce((sum, [, ms]) => sum + ms, 0) * 10,
  ) / 10;
const kinds = ['browser', 'renderer', 'gpu', 'network', 'utility', 'zygote'];
const cpuRow = (name: string, cpu: Record<string, number>, node: number) =>
  `${name.padEnd(34)} ${node.toFixed(1).padStart(8)} ${chromiumMs(cpu).toFixed(1).padStart(9)}  ${kinds
    .map((kind) => (cpu[`chromium ${kind}`] ?? 0).toFixed(1).padStart(9))
    .join('')}  ${(cpu['nats-server'] ?? 0).toFixed(1).padStart(5)} ${(cpu.s3rver ?? 0).toFixed(1).padStart(7)}`;
const serviceCpuMs = e2eCpu.all.service ?? 0;
const lightServiceCpuMs = ratio(e2eCpu.light.service ?? 0, 1);
const baselineChromiumMs = ratio(chromiumMs(baselineCpu.light) + chromiumMs(baselineCpu.heavy), 2);
const row = (name: string, r: LoopResult) =>
  `${name.padEnd(34)} ${r.perSecond.toFixed(2).padStart(8)} ${r.p50.toFixed(0).padStart(7)} ${r.p95.toFixed(0).padStart(7)} ${String(r.shots).padStart(6)}`;
// The shots table also says how much of the machine went unused, and how much its host took.
const percent = (share: number) => `${Math.round(share * 100)}%`;
const shotRow = (name: string, r: LoopResult) =>
  `${row(name, r)} ${percent(r.machine.idle).padStart(6)} ${percent(r.machine.stolen).padStart(7)}`;
const lines = [
  `Shutterbus benchmark — ${os.cpus().length} CPUs, ${results.at}`,
  '',
  `${'shots (1280×720 png)'.padEnd(34)} ${'shots/s'.padStart(8)} ${'p50 ms'.padStart(7)} ${'p95 ms'.padStart(7)} ${'shots'.padStart(6)} ${'idle'.padStart(6)} ${'stolen'.padStart(7)}`,
  ...Object.keys(pages).flatMap((name) => [
    shotRow(`A raw, fresh context/shot (${name})`, baselineA[name]),
    shotRow(`B raw, one page reused (${name})`, baselineB[name]),
  ]),
  ...(fullB ? [shotRow('B raw, full Chromium (light)', fullB.result)] : []),
  ...Object.entries(e2e).map(([name, r]) => shotRow(`Shutterbus /api/take ${name.replace('_c', ', c=')}`, r)),
  ...Object.keys(pages).map((name) => shotRow(`B in the ${name} rounds (median)`, baselineBInRounds[name])),
  `best ÷ B, within each of ${E2E_ROUNDS} rounds (the median; the rounds): ${Object.entries(vsB)
    .map(
      ([name, ratios]) =>
        `${name} ${ratio(ratioToB[name], 1).toFixed(2)} (${ratios.map((r) => r.toFixed(2)).join(' ')})`,
    )
    .join(', ')}`,
  '',
  `${'CPU ms per shot (/proc)'.padEnd(34)} ${'Node'.padStart(8)} ${'Chromium'.padStart(9)}  ${kinds.map((kind) => kind.padStart(9)).join('')}  ${'nats'.padStart(5)} ${'s3rver'.padStart(7)}`,
  ...Object.keys(pages).map((name) =>
    cpuRow(`B raw (${name}): Playwright client`, baselineCpu[name], baselineCpu[name].client ?? 0),
  ),
  ...(fullB ? [cpuRow('B raw, full Chromium (light): client', fullB.cpu, fullB.cpu.client ?? 0)] : []),
  ...Object.keys(pages).map((name) =>
    cpuRow(`Shutterbus ${name}, c=1,2,4: service`, e2eCpu[name], e2eCpu[name].service ?? 0),
  ),
  cpuRow('Shutterbus, every e2e shot: service', e2eCpu.all, serviceCpuMs),
  cpuRow(`Shutterbus warm-up, first ${warmup.shots}: service`, warmupCpu, warmupCpu.service ?? 0),
  '',
  `${'ad-heavy page, c=1'.padEnd(34)} ${'shots/s'.padStart(8)} ${'p50 ms'.padStart(7)} ${'p95 ms'.padStart(7)} ${'shots'.padStart(6)}`,
  ...Object.entries(blocking).map(([name, r]) => row(`Shutterbus ads, ${name}`, r)),
  `stack memory idle with the rule engines loaded: ${idleWithRulesMb.toFixed(0)} MB`,
  `rules (compile from the lists / load compiled / size): ${Object.entries(rules.sets)
    .map(([name, set]) => `${name} ${set.compileMs} ms / ${set.loadMs} ms / ${set.compiledMb} MB`)
    .join(', ')}`,
  `one request matched against every network rule set: ${rules.matchMicroseconds} µs`,
  '',
  `${'light page, c=1'.padEnd(34)} ${'shots/s'.padStart(8)} ${'p50 ms'.padStart(7)} ${'p95 ms'.padStart(7)} ${'shots'.padStart(6)}  p50 ÷ plain png`,
  ...Object.entries(variants).map(
    ([name, r]) => `${row(name, r)}  ${ratio(r.p50, variants['plain png'].p50).toFixed(2).padStart(6)}`,
  ),
  '',
  ...animationLines(animations),
  ...pdfLines(pdfs),
  ...tenantLines(tenants, row),
  rawRoundRobinLine(rawRoundRobin),
  '',
  ...mixLines(mix),
  '',
  ...fullPageLines(fullPages, row),
  '',
  `${'light page, c=1 (rounds alternated)'.padEnd(34)} ${'shots/s'.padStart(8)} ${'p50 ms'.padStart(7)} ${'p95 ms'.padStart(7)} ${'shots'.padStart(6)}  p50 ÷ tracing off`,
  ...Object.entries(tracing).map(
    ([name, r]) => `${row(name, r)}  ${ratio(r.p50, tracing['tracing off'].p50).toFixed(2).padStart(6)}`,
  ),
  `OTLP export requests the sink received: ${tracePosts}`,
  '',
  `${'http (autocannon, 10 connections)'.padEnd(34)} ${'req/s'.padStart(8)}  statuses`,
  `${'bare Fastify 302 route'.padEnd(34)} ${http.bare.perSecond.toFixed(0).padStart(8)}  rounds ${http.bare.rounds.join(' ')}  ${JSON.stringify(http.bare.statuses)}`,
  ...(
    [
      ['cached signed 302, ingress only', http.redirect],
      ['bad key 401, ingress only', http.rejected],
      ['cached signed 302, one process', http.redirectOneProcess],
      ['bad key 401, one process', http.rejectedOneProcess],
    ] as const
  ).map(
    ([name, r]) =>
      `${name.padEnd(34)} ${(r?.perSecond.toFixed(0) ?? 'n/a').padStart(8)}  rounds ${r?.rounds.join(' ') ?? '-'}  ${JSON.stringify(r?.statuses ?? {})}`,
  ),
  '',
  `stack memory (PSS: service + Chromium + nats-server + s3rver): idle ${idleMb.toFixed(0)} MB, under load ${loadMb.toFixed(0)} MB`,
  `start → first screenshot: ${firstShotSeconds.toFixed(2)} s (the file cache warm)`,
  coldStartLine(cold),
  ...imageLines(image),
  '',
  ...natsCostLines(natsCost),
  ...kvTurnsLines(kvTurns),
  '',
  'targets (the first set)',
];
// Ratios to the bare route: the median of the rounds' ratios.
const redirectRatio = http.redirect ? roundsRatio(http.redirect, http.bare) : null;
const rejectedRatio = roundsRatio(http.rejected, http.bare);
const redirectOneProcessRatio = http.redirectOneProcess ? roundsRatio(http.redirectOneProcess, http.bare) : null;
const rejectedOneProcessRatio = roundsRatio(http.rejectedOneProcess, http.bare);
const targets = {
  throughput_vs_A: {
    value: ratio(best[1].perSecond, baselineA.light.perSecond),
    goal: '≥ 2.0',
    met: best[1].perSecond / baselineA.light.perSecond >= 2,
    at: best[0],
  },
  p50_c1_vs_A: {
    value: ratio(e2e.light_c1.p50, baselineA.light.p50),
    goal: '≤ 0.75',
    met: e2e.light_c1.p50 / baselineA.light.p50 <= 0.75,
  },
  redirect_vs_bare: {
    value: redirectRatio === null ? null : ratio(redirectRatio, 1),
    goal: '≥ 0.5',
    met: (redirectRatio ?? 0) >= 0.5,
  },
  rejected_vs_bare: { value: ratio(rejectedRatio, 1), goal: '(reported)', met: true },
  idle_memory_mb: { value: Math.round(idleMb), goal: '< 700', met: idleMb < 700 },
  idle_memory_rules_mb: { value: Math.round(idleWithRulesMb), goal: '< 700', met: idleWithRulesMb < 700 },
  block_ads_vs_none: {
    value: ratio(blocking.block_ads.p50, blocking.none.p50),
    goal: '≤ 1.0',
    met: blocking.block_ads.p50 <= blocking.none.p50,
  },
  first_shot_seconds: { value: firstShotSeconds, goal: '≤ 3', met: firstShotSeconds <= 3 },
  // A plain png with disable_animations beside one without, in the same loop (p50 ratio).
  disable_animations_vs_plain: {
    value: ratio(variants.disable_animations.p50, variants['plain png'].p50),
    goal: '(reported)',
    met: true,
  },
};
const targetsIssue18 = {
  light_vs_B: {
    value: ratio(ratioToB.light, 1),
    goal: '≥ 0.93',
    met: ratioToB.light >= 0.93,
    at: best[0],
  },
  heavy_vs_B: {
    value: ratio(ratioToB.heavy, 1),
    goal: '≥ 0.85',
    met: ratioToB.heavy >= 0.85,
    at: bestHeavy[0],
  },
  service_cpu_ms_per_shot: {
    value: serviceCpuMs,
    goal: '≤ 30',
    met: serviceCpuMs <= 30,
    beside: `Chromium ${chromiumMs(e2eCpu.all)} ms/shot; baseline B's Chromium ${baselineChromiumMs} ms/shot`,
  },
  redirect_vs_bare: {
    value: targets.redirect_vs_bare.value,
    goal: '≥ 0.85',
    met: (redirectRatio ?? 0) >= 0.85,
    beside: `an ingress-only process; the one-process stack ${redirectOneProcessRatio === null ? 'n/a' : ratio(redirectOneProcessRatio, 1)}`,
  },
  rejected_vs_bare: {
    value: targets.rejected_vs_bare.value,
    goal: '≥ 0.5',
    met: rejectedRatio >= 0.5,
    beside: `an ingress-only process; the one-process stack ${ratio(rejectedOneProcessRatio, 1)}`,
  },
  idle_memory_mb: { value: Math.round(idleMb), goal: '≤ 450', met: idleMb <= 450 },
  first_shot_seconds: { value: targets.first_shot_seconds.value, goal: '≤ 1.5', met: firstShotSeconds <= 1.5 },
};
const roundRobin = tenants.median['24 workspaces round-robin'];
// Round-robin over one workspace within each round, the median of the rounds (bench/tenants.ts).
const roundRobinVsOne = tenants.vsOne['24 workspaces round-robin'];
// The budget the bench's service runs with (its environment is this process's).
const renderBudgetMb = Number(process.env.RENDER_MEMORY_BUDGET) || defaultRenderMemoryBudgetMb();
const targetsTenants = {
  rr24_throughput_vs_one: {
    value: ratio(roundRobinVsOne.perSecond, 1),
    goal: '≥ 0.9',
    met: roundRobinVsOne.perSecond >= 0.9,
    beside: `raw Chromium's own, 24 pages round-robin ÷ one page at c=1: ${ratio(rawRoundRobin.roundRobin.perSecond / rawRoundRobin.one.perSecond, 1)}`,
  },
  rr24_p50_vs_one: { value: ratio(roundRobinVsOne.p50, 1), goal: '≤ 1.2', met: roundRobinVsOne.p50 <= 1.2 },
  rr24_stack_pss_mb: { value: Math.round(roundRobin.peakMb), goal: '≤ 1500', met: roundRobin.peakMb <= 1500 },
  rr24_chromium_in_budget: {
    value: Math.round(roundRobin.chromiumPeakMb),
    goal: `≤ ${renderBudgetMb}`,
    met: roundRobin.chromiumPeakMb <= renderBudgetMb,
    beside: "the service Chromium's peak PSS against RENDER_MEMORY_BUDGET",
  },
  light_vs_B: {
    value: targetsIssue18.light_vs_B.value,
    goal: '≥ 1.25',
    met: ratioToB.light >= 1.25,
  },
  heavy_vs_B: {
    value: targetsIssue18.heavy_vs_B.value,
    goal: '≥ 1.2',
    met: ratioToB.heavy >= 1.2,
  },
  service_cpu_ms_per_light_shot: {
    value: lightServiceCpuMs,
    goal: '≤ 12',
    met: lightServiceCpuMs <= 12,
    beside: `the light rows at c=1, 2 and 4; baseline B's Playwright client ${ratio(baselineCpu.light.client ?? 0, 1)} ms/shot`,
  },
  redirect_one_process_vs_bare: {
    value: redirectOneProcessRatio === null ? null : ratio(redirectOneProcessRatio, 1),
    goal: '≥ 1.0',
    met: (redirectOneProcessRatio ?? 0) >= 1,
  },
  cold_first_shot_seconds: {
    value: cold.median,
    goal: '≤ 1.5',
    met: cold.median !== null && cold.median <= 1.5,
    beside: 'the file cache evicted before each of three starts; the median',
  },
  zipf_mix_throughput_vs_one: {
    value: ratio(mix.zipfVsOne.perSecond, 1),
    goal: '≥ 0.85',
    met: mix.zipfVsOne.perSecond >= 0.85,
    beside: `the mix at c=${mix.concurrency}: ${mix.median[ZIPF].perSecond.toFixed(2)} ÷ ${mix.median[ONE].perSecond.toFixed(2)} shots/s`,
  },
  zipf_mix_p50_vs_one: { value: ratio(mix.zipfVsOne.p50, 1), goal: '≤ 1.3', met: mix.zipfVsOne.p50 <= 1.3 },
  full_page_vs_raw: {
    value: ratio(fullPages.vsRaw['full page, scroll on, c=2'].perSecond, 1),
    goal: '≥ 2.0',
    met: fullPages.vsRaw['full page, scroll on, c=2'].perSecond >= 2,
    beside: `scroll on, c=2 ÷ the raw full-page loop; scroll off ${ratio(fullPages.vsRaw['full page, scroll off, c=2'].perSecond, 1)}; the file ${ratio(fullPages.bytes['full page, scroll on, c=2'], fullPages.bytes['raw Playwright, fullPage, c=1'])}× the raw loop's`,
  },
  full_page_p50_vs_raw: {
    value: ratio(fullPages.vsRaw['full page, scroll on, c=1'].p50, 1),
    goal: '≤ 1.0',
    met: fullPages.vsRaw['full page, scroll on, c=1'].p50 <= 1,
    beside: `scroll on, c=1; scroll off ${ratio(fullPages.vsRaw['full page, scroll off, c=1'].p50, 1)}`,
  },
  tracing_p50_vs_off: {
    value: ratio(tracing['tracing on (OTLP to a local sink)'].p50, tracing['tracing off'].p50),
    goal: '(reported)',
    met: true,
  },
};
const targetLine = (name: string, t: { value: unknown; goal: string; met: boolean; beside?: string }) =>
  `  ${name.padEnd(24)} ${String(t.value).padStart(8)}  goal ${t.goal.padEnd(10)} ${(t.met ? 'met' : 'NOT met').padEnd(7)}${t.beside ? `  (${t.beside})` : ''}`;
for (const [name, t] of Object.entries(targets)) lines.push(targetLine(name, t));
lines.push('', 'targets (the browser-limit set; the soak is `make bench ARGS=soak`)');
for (const [name, t] of Object.entries(targetsIssue18)) lines.push(targetLine(name, t));
lines.push('', 'targets (many workspaces, light page, c=4: 24 round-robin ÷ one workspace; ahead of the browser)');
for (const [name, t] of Object.entries(targetsTenants)) lines.push(targetLine(name, t));
process.stdout.write(`\n${lines.join('\n')}\n`);
Object.assign(results, {
  baselineA,
  baselineB,
  baselineBRounds,
  e2eRounds,
  baselineCpu,
  fullChromiumB: fullB,
  e2e,
  e2eCpu,
  warmupCpu,
  blocking,
  idleWithRulesMb,
  rules,
  variants,
  animations,
  pdfs,
  http,
  idleMb,
  loadMb,
  firstShotSeconds,
  cold,
  natsCost,
  kvTurns,
  image,
  targets,
  targetsIssue18,
  tenants,
  rawRoundRobin,
  mix,
  fullPages,
  tracing,
  targetsTenants,
});
const out = path.join(import.meta.dirname, 'results');
mkdirSync(out, { recursive: true });
writeFileSync(path.join(out, 'latest.json'), `${JSON.stringify(results, null, 2)}\n`);
log(`wrote ${path.join(out, 'latest.json')}`);
process.exit(0);
