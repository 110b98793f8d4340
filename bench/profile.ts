// `make bench ARGS=profile`: where a shot's CPU goes. Runs light-page shots through /api/take with
// V8's CPU profiler on in the service (bench/service-hooks.mjs) and sums the samples by function and
// by module (self time, ms per shot); beside it, the CPU per shot of every process (/proc).
// Writes bench/results/profile.json.

import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpuMs, CpuMeter, loop, perShot } from './measure.ts';
import { startBenchSite } from './site.ts';
import { startBenchStack } from './stack.ts';

const SHOTS = Number(process.env.PROFILE_SHOTS ?? 300);
const CONCURRENCY = 2;
// The sampling interval bench/service-hooks.mjs sets.
const SAMPLE_MS = 0.5;
const log = (line: string) => process.stderr.write(`${line}\n`);

/** The parts of a .cpuprofile this reads. */
interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

const site = await startBenchSite();
const profileFile = path.join(mkdtempSync(path.join(os.tmpdir(), 'shutterbus-profile-')), 'service.cpuprofile');
const stack = await startBenchStack(site, {
  NODE_OPTIONS: `--import ${path.join(import.meta.dirname, 'service-hooks.mjs')}`,
  BENCH_CPU_PROFILE: profileFile,
});
// The service's bundle as it was when the service started (another build may replace it meanwhile).
const bundle = readFileSync(path.join(import.meta.dirname, '../dist/service.js'), 'utf8').split('\n');
const take = async () => {
  const response = await fetch(`${stack.base}/api/take?url=${encodeURIComponent(site.light)}`, {
    headers: { 'x-access-key': stack.workspace.access_key },
  });
  const bytes = await response.arrayBuffer();
  if (response.status !== 200 || bytes.byteLength < 1000) throw new Error(`take answered ${response.status}`);
};
// Warm, as `make bench` measures (bench/run.ts, WARMUP): a young process's shots cost more while V8 compiles.
const WARMUP_SHOTS = 500;
log(`profile: ${WARMUP_SHOTS} light shots to warm up`);
await loop(take, { concurrency: CONCURRENCY, count: WARMUP_SHOTS, maxSeconds: 180, warmup: 0 });

log(`profile: ${SHOTS} light shots at concurrency ${CONCURRENCY}`);
// The service's CPU so far on its main thread (the one the profile samples) and on every other (V8's
// GC and compiler helpers, libuv's pool: in Node 20 they all carry the name `node`).
const threadCpu = (pid: number) => {
  const byName: Record<string, number> = {};
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const name = tid === String(pid) ? 'main thread' : 'other threads';
      byName[name] = (byName[name] ?? 0) + (cpuMs(`${pid}/task/${tid}`) ?? 0);
    } catch {
      // The thread ended.
    }
  }
  return byName;
};
// User and kernel time of the service process (stat(5) fields 14 and 15, in clock ticks of 10 ms).
const userSystem = (pid: number) => {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { user: Number(fields[11]) * 10, kernel: Number(fields[12]) * 10 };
};
const threadsBefore = { ...threadCpu(stack.service.pid!), ...userSystem(stack.service.pid!) };
let shots = 0;
const meter = new CpuMeter(stack.labels).start();
stack.service.kill('SIGUSR2');
await new Promise((resolve) => setTimeout(resolve, 200));
const result = await loop(
  async () => {
    await take();
    shots++;
  },
  { concurrency: CONCURRENCY, count: SHOTS, maxSeconds: 120, warmup: 0 },
);
stack.service.kill('SIGUSR2');
const cpu = perShot({}, meter.stop(), shots);
const threads = perShot(threadsBefore, { ...threadCpu(stack.service.pid!), ...userSystem(stack.service.pid!) }, shots);
threads.total = Math.round((threads.total / 2) * 10) / 10;
for (let waited = 0; !existsSync(profileFile) && waited < 20_000; waited += 100)
  await new Promise((resolve) => setTimeout(resolve, 100));
await new Promise((resolve) => setTimeout(resolve, 500));
await stack.stop();
await site.close();
const profile = JSON.parse(readFileSync(profileFile, 'utf8')) as CpuProfile;

// Which source file or package a line of the bundle comes from: esbuild heads each module's code
// with its path (`// src/…`, `// node_modules/<package>/…`).
const moduleAt: string[] = [];
let current = 'dist/service.js';
for (const [index, line] of bundle.entries()) {
  const header = /^\/\/ ((?:src|actors)\/\S+|node_modules\/\S+)$/.exec(line);
  if (header) current = /^node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(header[1])?.[1] ?? header[1];
  moduleAt[index] = current;
}
const moduleOf = (url: string, lineNumber: number, name: string) => {
  if (!url) return name.startsWith('(') ? name : '(native)';
  if (url.endsWith('dist/service.js')) return moduleAt[lineNumber] ?? 'dist/service.js';
  if (url.startsWith('node:')) return 'node: internals';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1];
  return path.relative(path.join(import.meta.dirname, '..'), url.startsWith('file:') ? fileURLToPath(url) : url);
};

// Self time of each non-idle sample.
const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
const byFunction = new Map<string, number>();
const byModule = new Map<string, number>();
const byOwner = new Map<string, number>();
const parents = new Map<number, number>();
for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id);
// Who a sample's time is for: the nearest frame up its stack in a package or a source file (native
// code and node: internals are charged to whoever called them).
const ownerOf = (nodeId: number): string => {
  for (let id: number | undefined = nodeId; id !== undefined; id = parents.get(id)) {
    const { url, lineNumber, functionName } = nodes.get(id)!.callFrame;
    const module = moduleOf(url, lineNumber, functionName);
    if (url && module !== 'node: internals') return module;
  }
  return moduleOf('', 0, nodes.get(nodeId)!.callFrame.functionName);
};
let sampled = 0;
for (const nodeId of profile.samples) {
  // Each sample weighs the same: the sampler interrupts the thread every 0.5 ms of wall time, but a
  // thread waiting for a CPU takes its pending sample only when it runs again, with a long gap before
  // it; weighing by the gap would charge the machine's load to whatever ran next (syscalls mostly).
  const delta = 1;
  const { functionName, url, lineNumber } = nodes.get(nodeId)!.callFrame;
  if (functionName === '(idle)') continue;
  const module = moduleOf(url, lineNumber, functionName);
  const name = `${functionName || '(anonymous)'} ${module}${url ? `:${lineNumber + 1}` : ''}`;
  byFunction.set(name, (byFunction.get(name) ?? 0) + delta);
  byModule.set(module, (byModule.get(module) ?? 0) + delta);
  const owner = ownerOf(nodeId);
  byOwner.set(owner, (byOwner.get(owner) ?? 0) + delta);
  sampled += delta;
}
// Each share of the samples is scaled to the service's CPU per shot that /proc measured.
const serviceMs = cpu.service ?? 0;
const top = (map: Map<string, number>, count: number) =>
  [...map]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([name, us]) => ({
      name,
      share: Math.round((us / sampled) * 1000) / 10,
      msPerShot: Math.round((us / sampled) * serviceMs * 100) / 100,
    }));
const summary = {
  at: new Date().toISOString(),
  machine: { cpus: os.cpus().length, load: os.loadavg().map((value) => Math.round(value * 100) / 100) },
  shots,
  concurrency: CONCURRENCY,
  perSecond: Math.round(result.perSecond * 100) / 100,
  p50: Math.round(result.p50),
  cpuPerShotMs: cpu,
  serviceThreadsMsPerShot: threads,
  profiledServiceMsPerShot: Math.round(((sampled * SAMPLE_MS) / shots) * 10) / 10,
  modules: top(byModule, 25),
  owners: top(byOwner, 25),
  functions: top(byFunction, 30),
};
const column = (rows: { name: string; share: number; msPerShot: number }[]) =>
  rows
    .map((row) => `  ${row.msPerShot.toFixed(2).padStart(6)} ${`${row.share.toFixed(1)}%`.padStart(6)}  ${row.name}`)
    .join('\n');
process.stdout.write(`
Shutterbus CPU profile — ${summary.machine.cpus} CPUs, load ${summary.machine.load.join(' ')}
${shots} light shots at concurrency ${CONCURRENCY}: ${summary.perSecond} shots/s, p50 ${summary.p50} ms
CPU ms per shot (/proc): ${Object.entries(cpu)
  .map(([label, ms]) => `${label} ${ms}`)
  .join(', ')}
the service, CPU ms per shot: by thread ${threads['main thread']} main, ${threads['other threads']} other; by mode ${threads.user} user, ${threads.kernel} kernel
service's main thread, V8 profile: ${summary.profiledServiceMsPerShot} ms per shot in non-idle samples; below, each share × the service's ${serviceMs} ms

self time by module: ms per shot, share
${column(summary.modules)}

the same, native code and node: internals charged to the nearest package or source file calling them
${column(summary.owners)}

self time by function: ms per shot, share
${column(summary.functions)}
`);
const out = path.join(import.meta.dirname, 'results');
mkdirSync(out, { recursive: true });
writeFileSync(path.join(out, 'profile.json'), `${JSON.stringify(summary, null, 2)}\n`);
log(`wrote ${path.join(out, 'profile.json')} (raw profile, for Chrome DevTools: ${profileFile})`);
