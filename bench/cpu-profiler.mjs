// Loaded into the profiled service (NODE_OPTIONS=--import; Node 20 refuses --cpu-prof there): the
// first SIGUSR2 starts V8's CPU profiler, the second stops it and writes the profile to
// BENCH_CPU_PROFILE, then a line `profile written` on stderr.
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';

const session = new Session();
session.connect();
let running = false;
process.on('SIGUSR2', () => {
  if (!running) {
    running = true;
    session.post('Profiler.enable', () => session.post('Profiler.setSamplingInterval', { interval: 500 }, () => session.post('Profiler.start')));
    return;
  }
  running = false;
  session.post('Profiler.stop', (error, result) => {
    if (error) process.stderr.write(`profile failed: ${error.message}\n`);
    else writeFileSync(process.env.BENCH_CPU_PROFILE, JSON.stringify(result.profile));
    process.stderr.write('profile written\n');
  });
});
