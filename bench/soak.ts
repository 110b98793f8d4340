// `make bench ARGS=soak`: 2,000 mixed renders through /api/take at a modest concurrency (light and
// heavy pages, several formats, options, failures, async renders with a webhook), watching the
// stack's memory after every 200, their latency, and Chromium's process count; then stops
// the service and counts the Chromium processes it left. Writes bench/results/soak.json.

import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { CpuMeter, isChromium, listProcesses, percentile, pssMb } from './measure.ts';
import { startBenchSite } from './site.ts';
import { startBenchStack } from './stack.ts';

const RENDERS = Number(process.env.SOAK_RENDERS ?? 2000);
const WINDOW = 200;
const CONCURRENCY = 3;
// Stop issuing renders here, so that the soak ends within 15 minutes even on a loaded machine.
const MAX_SECONDS = 13 * 60;
const log = (line: string) => process.stderr.write(`${line}\n`);

/** One kind of render in the mix: its query, whether it should succeed, whether it goes async with a webhook. */
interface RenderKind {
  name: string;
  params: Record<string, string>;
  fails?: boolean;
  async?: boolean;
}

const site = await startBenchSite();

// The mix: one 40-render cycle, repeated, so that every window of 200 holds the same five cycles.
const cycle: [number, RenderKind][] = [
  [10, { name: 'light png', params: { url: site.light } }],
  [6, { name: 'heavy png', params: { url: site.heavy } }],
  [3, { name: 'light jpeg', params: { url: site.light, format: 'jpeg' } }],
  [3, { name: 'light webp', params: { url: site.light, format: 'webp' } }],
  [2, { name: 'light pdf', params: { url: site.light, format: 'pdf' } }],
  [2, { name: 'heavy jpeg', params: { url: site.heavy, format: 'jpeg' } }],
  [2, { name: 'short full_page', params: { url: site.short, full_page: 'true' } }],
  [2, { name: 'light dark_mode', params: { url: site.light, dark_mode: 'true' } }],
  [2, { name: 'light iphone_13', params: { url: site.light, viewport_device: 'iphone_13' } }],
  [2, { name: 'ads block_ads', params: { url: site.ads, block_ads: 'true' } }],
  [2, { name: '404 page (fails)', params: { url: site.missing }, fails: true }],
  [2, { name: 'async light + webhook', params: { url: site.light }, async: true }],
  [2, { name: 'async heavy webp + webhook', params: { url: site.heavy, format: 'webp' }, async: true }],
];
const pattern: RenderKind[] = [];
// Interleaved rather than in blocks, so that concurrent renders mix kinds.
for (let round = 0; pattern.length < 40; round++)
  for (const [times, kind] of cycle) if (round < times) pattern.push(kind);

// The webhook receiver: each delivery resolves the render waiting for it.
const waiting = new Map<string, (type: string) => void>();
const arrived = new Map<string, string>();
const receiver = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    res.writeHead(200).end();
    try {
      const body = JSON.parse(Buffer.concat(chunks).toString()) as { type: string; data: { render_id: string } };
      const resolve = waiting.get(body.data.render_id);
      if (resolve) resolve(body.type);
      else arrived.set(body.data.render_id, body.type);
    } catch {
      // Not a delivery.
    }
  });
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const webhookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

log('soak: stack');
const gcReport = path.join(mkdtempSync(path.join(os.tmpdir(), 'shutterbus-soak-')), 'memory.json');
const stack = await startBenchStack(site, {
  NODE_OPTIONS: `--import ${path.join(import.meta.dirname, 'service-hooks.mjs')}`,
  BENCH_GC_REPORT: gcReport,
});
const headers = { 'x-access-key': stack.workspace.access_key };

/** One render of `kind`; resolves with whether its outcome was the expected one (and why not). Async ones end when their webhook arrives. */
async function render(kind: RenderKind): Promise<string | null> {
  const query = new URLSearchParams({
    ...kind.params,
    ...(kind.async ? { async: 'true', webhook_url: webhookUrl } : {}),
  });
  const response = await fetch(`${stack.base}/api/take?${query}`, { headers, signal: AbortSignal.timeout(60_000) });
  const body = Buffer.from(await response.arrayBuffer());
  if (kind.async) {
    if (response.status !== 202) return `${kind.name}: ${response.status} ${body.toString().slice(0, 120)}`;
    const renderId = (JSON.parse(body.toString()) as { render_id: string }).render_id;
    const type =
      arrived.get(renderId) ??
      (await new Promise<string>((resolve) => {
        const timer = setTimeout(() => resolve('no webhook in 60 s'), 60_000);
        waiting.set(renderId, (delivered) => {
          clearTimeout(timer);
          resolve(delivered);
        });
      }));
    waiting.delete(renderId);
    arrived.delete(renderId);
    return type === 'render.succeeded' ? null : `${kind.name}: ${type}`;
  }
  if (kind.fails)
    return response.status === 502 && body.toString().includes('host_returned_error')
      ? null
      : `${kind.name}: ${response.status} ${body.toString().slice(0, 120)}`;
  return response.status === 200 && body.length > 500
    ? null
    : `${kind.name}: ${response.status} ${body.toString().slice(0, 120)}`;
}

// The service's Chromium processes, by their process group (Chromium's helpers keep the browser's, even orphaned).
const processGroup = (pid: number) => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
  } catch {
    return null;
  }
};
const chromiumGroups = new Set<number>();
const chromiumCounts: number[] = [];
const countChromium = () => {
  const pids = stack.chromiumPids();
  for (const pid of pids) {
    const group = processGroup(pid);
    if (group !== null) chromiumGroups.add(group);
  }
  chromiumCounts.push(pids.length);
  return pids.length;
};

/** Runs renders [from, to) of the sequence with CONCURRENCY workers; latency (ms) and outcome land at their index. */
const latencies: number[] = [];
const failures: string[] = [];
const started = performance.now();
let timedOut = false;
// The CPU of the service and of its Chromium per render, window by window: a window that took
// longer with no more CPU a render waited on something else (the machine, most likely).
const cpuMeter = new CpuMeter(stack.labels);
const cpuByWindow: Array<{ service: number; chromium: number }> = [];
const cpuTotals = () => {
  const totals = cpuMeter.read();
  const chromium = Object.entries(totals).filter(([label]) => label.startsWith('chromium'));
  return { service: totals.service ?? 0, chromium: chromium.reduce((all, [, ms]) => all + ms, 0) };
};
async function run(from: number, to: number): Promise<void> {
  let next = from;
  const worker = async () => {
    while (next < to) {
      if (performance.now() - started > MAX_SECONDS * 1000) {
        timedOut = true;
        return;
      }
      const index = next++;
      const kind = pattern[index % pattern.length];
      const t = performance.now();
      const problem = await render(kind).catch((error: Error) => `${kind.name}: ${error.message}`);
      latencies[index] = performance.now() - t;
      if (problem) failures.push(`#${index} ${problem}`);
      if (index % 100 === 99)
        log(
          `soak: ${index + 1} renders, ${((performance.now() - started) / 1000).toFixed(0)} s, ${chromiumCounts.at(-1)} Chromium processes, ${failures.length} unexpected outcomes`,
        );
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
}
/** One window of renders [from, to), its CPU a render counted apart from the pauses between windows. */
async function runWindow(from: number, to: number): Promise<void> {
  const before = cpuTotals();
  await run(from, to);
  const after = cpuTotals();
  const done = latencies.slice(from, to).filter((ms) => ms !== undefined).length || 1;
  cpuByWindow.push({
    service: Math.round((after.service - before.service) / done),
    chromium: Math.round((after.chromium - before.chromium) / done),
  });
}
// The stack's PSS after 3 s without renders, in all and per kind of process (which one grew).
const settledMemory = async (fullGc: boolean) => {
  await new Promise((resolve) => setTimeout(resolve, 3000));
  const byLabel: Record<string, number> = {};
  const countByLabel: Record<string, number> = {};
  const renderersMb: number[] = [];
  for (const [pid, label] of stack.labels()) {
    const mb = pssMb([pid]);
    byLabel[label] = Math.round((byLabel[label] ?? 0) + mb);
    countByLabel[label] = (countByLabel[label] ?? 0) + 1;
    if (label === 'chromium renderer') renderersMb.push(Math.round(mb));
  }
  const total = pssMb(stack.pids());
  // Then the service's heap, after a full GC when asked: how much of its memory is live JavaScript
  // heap. Only at the end: a forced full GC leaves the service costlier for the rest of its run
  // (≈ 21 → 39 ms of CPU a light take, measured), so one after the first window would slow the rest.
  rmSync(gcReport, { force: true });
  if (fullGc) writeFileSync(`${gcReport}.full-gc`, '');
  stack.service.kill('SIGUSR2');
  for (let waited = 0; !existsSync(gcReport) && waited < 10_000; waited += 100)
    await new Promise((resolve) => setTimeout(resolve, 100));
  await new Promise((resolve) => setTimeout(resolve, 200));
  const usage = JSON.parse(readFileSync(gcReport, 'utf8')) as NodeJS.MemoryUsage;
  const mb = (bytes: number) => Math.round(bytes / 1048576);
  return {
    total,
    byLabel,
    countByLabel,
    renderersMb: renderersMb.sort((a, b) => b - a),
    serviceHeap: {
      heapUsed: mb(usage.heapUsed),
      heapTotal: mb(usage.heapTotal),
      external: mb(usage.external),
      arrayBuffers: mb(usage.arrayBuffers),
      rss: mb(usage.rss),
    },
  };
};

// One unmeasured cycle first, so that one-time costs (the ad rule engine's load, the first pdf)
// do not sit in the first window.
log('soak: warm-up cycle');
for (const kind of pattern) await render(kind);
const sampler = setInterval(countChromium, 1000);
countChromium();
log(`soak: ${RENDERS} renders at concurrency ${CONCURRENCY}`);
cpuMeter.start();
await runWindow(0, Math.min(WINDOW, RENDERS));
const firstWindowMaxChromium = Math.max(...chromiumCounts);
const memoryAfterFirst = await settledMemory(false);
const readings = [memoryAfterFirst];
for (let from = WINDOW; from < RENDERS && !timedOut; from += WINDOW) {
  await runWindow(from, Math.min(from + WINDOW, RENDERS));
  if (from + WINDOW < RENDERS) readings.push(await settledMemory(false));
}
const seconds = (performance.now() - started) / 1000;
clearInterval(sampler);
cpuMeter.stop();
countChromium();
const memoryAfterAll = await settledMemory(true);
const renders = latencies.filter((ms) => ms !== undefined).length;

// Stop the service, then look for any process left in one of its Chromium process groups.
await stack.stop();
await site.close();
receiver.close();
const leftover = () =>
  listProcesses().filter((proc) => isChromium(proc) && chromiumGroups.has(processGroup(proc.pid) ?? -1)).length;
let leftoverChromium = leftover();
for (let waited = 0; leftoverChromium > 0 && waited < 5000; waited += 250) {
  await new Promise((resolve) => setTimeout(resolve, 250));
  leftoverChromium = leftover();
}

const round = (value: number) => Math.round(value * 100) / 100;
const firstWindow = latencies.slice(0, WINDOW);
const lastWindow = latencies.slice(Math.max(WINDOW, renders - WINDOW), renders);
// Where a growth shows: the p95 of every window in turn, and each kind's p50 in the first and last.
const windowP95s = Array.from({ length: Math.ceil(renders / WINDOW) }, (_, w) =>
  Math.round(percentile(latencies.slice(w * WINDOW, (w + 1) * WINDOW), 95)),
);
const kindP50 = (from: number, to: number, name: string) =>
  Math.round(
    percentile(
      latencies.slice(from, to).filter((_, i) => pattern[(from + i) % pattern.length].name === name),
      50,
    ),
  );
const byKind = Object.fromEntries(
  cycle.map(([, kind]) => [
    kind.name,
    { first: kindP50(0, WINDOW, kind.name), last: kindP50(Math.max(WINDOW, renders - WINDOW), renders, kind.name) },
  ]),
);
// Memory growth: the median of the stack's readings after the second half's windows over the
// median of the first half's. One reading moves by a warm page or two: a page is closed after an
// error and after 100 renders, its replacement's renderer starts small and grows with its renders
// (37–127 MB each in one run), and nats-server's caches fill as the stored streams grow; the first
// reading comes before the pages have lived their 100 renders. A leak raises the second half as a whole.
const windowMemory = [...readings, memoryAfterAll].map(({ total }) => total);
const half = Math.floor(windowMemory.length / 2);
const soak = {
  renders,
  memoryGrowth: round(percentile(windowMemory.slice(half), 50) / percentile(windowMemory.slice(0, half), 50)),
  p95Growth: round(percentile(lastWindow, 95) / percentile(firstWindow, 95)),
  leftoverChromium,
  details: {
    machine: { cpus: os.cpus().length, load: os.loadavg().map(round) },
    at: new Date().toISOString(),
    seconds: Math.round(seconds),
    concurrency: CONCURRENCY,
    timedOut,
    mix: Object.fromEntries(cycle.map(([times, kind]) => [kind.name, `${times}/40`])),
    memoryMb: {
      afterFirst200: Math.round(memoryAfterFirst.total),
      afterAll: Math.round(memoryAfterAll.total),
      firstToLast: round(memoryAfterAll.total / memoryAfterFirst.total),
    },
    memoryByProcessMb: { afterFirst200: memoryAfterFirst.byLabel, afterAll: memoryAfterAll.byLabel },
    // The stack after every window (renders paused, settled 3 s), and each renderer's PSS.
    memoryByWindowMb: [...readings, memoryAfterAll].map(({ total, byLabel, renderersMb }) => ({
      total: Math.round(total),
      service: byLabel.service,
      natsServer: byLabel['nats-server'],
      s3rver: byLabel.s3rver,
      renderersMb,
    })),
    // How many processes of each kind those figures add up: warm pages come and go between readings.
    processCounts: { afterFirst200: memoryAfterFirst.countByLabel, afterAll: memoryAfterAll.countByLabel },
    // After the first 200 as it stands, after all once a full GC has run.
    serviceHeapMb: { afterFirst200: memoryAfterFirst.serviceHeap, afterAllFullGc: memoryAfterAll.serviceHeap },
    latencyMs: {
      first200: { p50: Math.round(percentile(firstWindow, 50)), p95: Math.round(percentile(firstWindow, 95)) },
      last200: { p50: Math.round(percentile(lastWindow, 50)), p95: Math.round(percentile(lastWindow, 95)) },
      p95ByWindow: windowP95s,
      cpuMsPerRenderByWindow: cpuByWindow,
      p50ByKind: byKind,
    },
    chromiumProcesses: {
      maxInFirst200: firstWindowMaxChromium,
      max: Math.max(...chromiumCounts),
      atEnd: chromiumCounts.at(-1),
      processGroups: [...chromiumGroups],
    },
    unexpectedOutcomes: failures.length,
    firstUnexpected: failures.slice(0, 5),
  },
};
const d = soak.details;
process.stdout.write(`
Shutterbus soak — ${d.machine.cpus} CPUs, load ${d.machine.load.join(' ')}, ${d.at}
${renders} mixed renders (+ a 40-render warm-up) at concurrency ${CONCURRENCY} in ${d.seconds} s${timedOut ? ' (stopped at the time limit)' : ''}; ${failures.length} unexpected outcomes
stack memory (PSS, settled 3 s): after the first ${WINDOW} ${d.memoryMb.afterFirst200} MB, after all ${d.memoryMb.afterAll} MB (× ${d.memoryMb.firstToLast})
  by process, MB (first ${WINDOW} → all; several processes of a kind: their number): ${Object.keys(
    d.memoryByProcessMb.afterAll,
  )
    .map((label) => {
      const reading = (when: 'afterFirst200' | 'afterAll') => {
        const count = d.processCounts[when][label] ?? 0;
        return `${d.memoryByProcessMb[when][label] ?? 0}${count > 1 ? ` (${count})` : ''}`;
      };
      return `${label} ${reading('afterFirst200')} → ${reading('afterAll')}`;
    })
    .join(', ')}
  after each window, MB (the stack: its renderers each; the growth is the second half's median over the first's): ${d.memoryByWindowMb.map(({ total, renderersMb }) => `${total} (${renderersMb.join(' ')})`).join(', ')}
the service's heap, MB (after the first ${WINDOW} as it stands → after all and a full GC): ${Object.keys(
  d.serviceHeapMb.afterAllFullGc,
)
  .map(
    (key) =>
      `${key} ${d.serviceHeapMb.afterFirst200[key as keyof NodeJS.MemoryUsage]} → ${d.serviceHeapMb.afterAllFullGc[key as keyof NodeJS.MemoryUsage]}`,
  )
  .join(', ')}
latency first ${WINDOW}: p50 ${d.latencyMs.first200.p50} ms, p95 ${d.latencyMs.first200.p95} ms; last ${WINDOW}: p50 ${d.latencyMs.last200.p50} ms, p95 ${d.latencyMs.last200.p95} ms
  p95 of each window of ${WINDOW}, ms: ${windowP95s.join(' ')}
  CPU ms a render in each window, service / Chromium: ${cpuByWindow.map(({ service, chromium }) => `${service}/${chromium}`).join(' ')}
  p50 by kind, ms (first ${WINDOW} → last): ${Object.entries(byKind)
    .map(([name, { first, last }]) => `${name} ${first} → ${last}`)
    .join(', ')}
Chromium processes under the service (sampled every second): max ${d.chromiumProcesses.max} (max ${d.chromiumProcesses.maxInFirst200} in the first ${WINDOW}), ${d.chromiumProcesses.atEnd} at the end
${failures
  .slice(0, 5)
  .map((line) => `  unexpected: ${line}\n`)
  .join('')}
targets (the browser-limit set)
  memoryGrowth      ${String(soak.memoryGrowth).padStart(6)}  goal ≤ 1.1   ${soak.memoryGrowth <= 1.1 ? 'met' : 'NOT met'}
  p95Growth         ${String(soak.p95Growth).padStart(6)}  goal ≤ 1.1   ${soak.p95Growth <= 1.1 ? 'met' : 'NOT met'}
  leftoverChromium  ${String(leftoverChromium).padStart(6)}  goal 0       ${leftoverChromium === 0 ? 'met' : 'NOT met'}
  Chromium bounded  ${String(d.chromiumProcesses.max).padStart(6)}  goal ≤ ${d.chromiumProcesses.maxInFirst200 + 2} (the first ${WINDOW}'s max + 2)  ${d.chromiumProcesses.max <= d.chromiumProcesses.maxInFirst200 + 2 ? 'met' : 'NOT met'}
  renders           ${String(renders).padStart(6)}  goal ${RENDERS}    ${renders >= RENDERS ? 'met' : 'NOT met'}
`);
const out = path.join(import.meta.dirname, 'results');
mkdirSync(out, { recursive: true });
writeFileSync(path.join(out, 'soak.json'), `${JSON.stringify(soak, null, 2)}\n`);
log(`wrote ${path.join(out, 'soak.json')}`);
