// `make bench ARGS=compare`: the time a monitor takes to compare two 1280 × 4000 captures of a text
// page (PNG, as Chromium makes them), with the comparator before pixelmatch (bench/compare-before.ts)
// and with the one the service runs (src/monitors/compare.ts): one digit changed, and no change.
// Alternated run by run; the median of each.

import { chromium } from 'playwright-core';
import { DEFAULT_CHROMIUM_PATH } from '../src/config.ts';
import { compareCaptures } from '../src/monitors/compare.ts';
import { compareCaptures as compareBefore } from './compare-before.ts';
import { median } from './measure.ts';

const CHROMIUM = process.env.CHROMIUM_PATH || DEFAULT_CHROMIUM_PATH;
const RUNS = 7;
const WIDTH = 1280;
const HEIGHT = 4000;

/** A tall page of text with a pricing table; `price` is the one thing that changes. */
const page = (price: string) => {
  const paragraph = (i: number) =>
    `<p>Section ${i}. Our service level is measured monthly, and the uptime figure is published on the status page every week for all customers. Credits are applied to the next invoice when the figure falls below the level agreed.</p>`;
  const rows = ['Starter', 'Pro', 'Team', 'Business', 'Enterprise']
    .map((plan, i) => `<tr><td>${plan}</td><td>${i === 1 ? price : `$${(i + 1) * 10}`} / month</td></tr>`)
    .join('');
  return `<!doctype html><html><head><meta charset="utf-8"><style>body{margin:40px;font:16px sans-serif;line-height:1.5}td{padding:4px 16px}</style></head><body><h1>Pricing</h1><table>${rows}</table>${Array.from({ length: 60 }, (_, i) => paragraph(i)).join('')}</body></html>`;
};

const browser = await chromium.launch({ executablePath: CHROMIUM });
const tab = await browser.newPage({ viewport: { width: WIDTH, height: HEIGHT } });
const capture = async (price: string) => {
  await tab.setContent(page(price));
  return tab.screenshot({ type: 'png' });
};
const baseline = await capture('$19');
const cases = { 'one digit changed': await capture('$12'), 'no change': await capture('$19') };
await browser.close();

const comparators = {
  before: async (a: Buffer, b: Buffer) => {
    const result = await compareBefore(a, b);
    return Math.round(result.changedShare * WIDTH * HEIGHT);
  },
  // What the service does for a change: compare, then encode the diff image it stores.
  after: async (a: Buffer, b: Buffer) => {
    const result = await compareCaptures(a, b);
    if (result.changedPixels > 0) await result.diff();
    return result.changedPixels;
  },
};

const lines = [
  `Monitor comparison of two ${WIDTH} × ${HEIGHT} PNG captures: median of ${RUNS} alternated runs, wall ms and`,
  "the process's CPU ms (all threads: libvips decodes and encodes on its own)",
  '',
  `${'case'.padEnd(20)} ${'wall before'.padStart(11)} ${'after'.padStart(6)}  ${'CPU before'.padStart(10)} ${'after'.padStart(6)}  changed pixels before / after`,
];
const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};
const results: Record<string, unknown> = {};
for (const [name, current] of Object.entries(cases)) {
  const wall: Record<string, number[]> = { before: [], after: [] };
  const cpu: Record<string, number[]> = { before: [], after: [] };
  const found: Record<string, number> = {};
  // One unmeasured run each: sharp and pixelmatch loaded, V8 warmed.
  for (const compare of Object.values(comparators)) await compare(baseline, current);
  for (let run = 0; run < RUNS; run++) {
    for (const [side, compare] of Object.entries(comparators)) {
      const [started, cpuStarted] = [performance.now(), cpuMs()];
      found[side] = await compare(baseline, current);
      wall[side].push(performance.now() - started);
      cpu[side].push(cpuMs() - cpuStarted);
    }
  }
  const m = (values: number[]) => Math.round(median(values));
  const row = {
    wall: { before: m(wall.before), after: m(wall.after) },
    cpu: { before: m(cpu.before), after: m(cpu.after) },
    found,
  };
  results[name] = row;
  lines.push(
    `${name.padEnd(20)} ${String(row.wall.before).padStart(11)} ${String(row.wall.after).padStart(6)}  ${String(row.cpu.before).padStart(10)} ${String(row.cpu.after).padStart(6)}  ${found.before} / ${found.after}`,
  );
}
process.stdout.write(`${lines.join('\n')}\n${JSON.stringify(results)}\n`);
