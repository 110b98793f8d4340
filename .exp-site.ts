import { startBenchSite } from '/work/main/bench/site.ts';
const site = await startBenchSite();
console.log(site.light);
console.log(site.heavy);
process.on('SIGTERM', () => site.close().then(() => process.exit(0)));
