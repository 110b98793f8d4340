// Loaded into the benchmarked service (NODE_OPTIONS=--import; Node 20 refuses --cpu-prof and
// --expose-gc there), driven by SIGUSR2 through the inspector:
// - with BENCH_CPU_PROFILE set, the first SIGUSR2 starts V8's CPU profiler, the second stops it
//   and writes the profile to that path (bench/profile.ts);
// - with BENCH_GC_REPORT set, each SIGUSR2 writes process.memoryUsage() to that path, after a full
//   garbage collection when the file `${BENCH_GC_REPORT}.full-gc` exists (bench/soak.ts: is the
//   growth live memory?).
import { existsSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';

const session = new Session();
session.connect();
let profiling = false;
process.on('SIGUSR2', () => {
  const report = process.env.BENCH_GC_REPORT;
  if (report) {
    const write = () => writeFileSync(report, JSON.stringify(process.memoryUsage()));
    if (existsSync(`${report}.full-gc`)) session.post('HeapProfiler.collectGarbage', write);
    else write();
    return;
  }
  if (!profiling) {
    profiling = true;
    session.post('Profiler.enable', () =>
      session.post('Profiler.setSamplingInterval', { interval: 500 }, () => session.post('Profiler.start')),
    );
    return;
  }
  profiling = false;
  session.post('Profiler.stop', (error, result) => {
    if (error) process.stderr.write(`profile failed: ${error.message}\n`);
    else writeFileSync(process.env.BENCH_CPU_PROFILE, JSON.stringify(result.profile));
  });
});
