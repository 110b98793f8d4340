// Loaded into the benchmark's service (NODE_OPTIONS=--import): the ad, tracker and widget host
// names of the ad-heavy page (BENCH_LOCAL_NAMES) resolve to 127.0.0.1, where the bench site
// serves them, and every other name fails at once, so nothing the page asks for leaves the machine.
import dns from 'node:dns';

const local = new Set((process.env.BENCH_LOCAL_NAMES ?? '').split(',').filter(Boolean));
const original = dns.promises.lookup;
dns.promises.lookup = async (hostname, options) => {
  if (local.has(hostname))
    return options?.all ? [{ address: '127.0.0.1', family: 4 }] : { address: '127.0.0.1', family: 4 };
  if (hostname === 'localhost') return original(hostname, options);
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND', hostname });
};
