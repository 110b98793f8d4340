// What the blocking rules cost in the worker process: compiling each rule set from the installed
// lists (a cache miss), loading it compiled, its size, and matching one request against them all.

import { FiltersEngine, Request } from '@ghostery/adblocker';
import { compileRuleSet, RULE_SETS, type RuleSet } from '../src/render/steps/filters.ts';

/** Per rule set: compile and load times (ms), compiled size (MB); and the cost of one request's match (µs). */
export interface RuleCosts {
  sets: Record<string, { compileMs: number; loadMs: number; compiledMb: number }>;
  matchMicroseconds: number;
}

/** Measures every rule set, then matches 20,000 varied requests against the network ones. */
export async function measureRules(): Promise<RuleCosts> {
  const sets: RuleCosts['sets'] = {};
  const engines: FiltersEngine[] = [];
  for (const name of Object.keys(RULE_SETS) as RuleSet[]) {
    const started = performance.now();
    const bytes = await compileRuleSet(name);
    const compileMs = performance.now() - started;
    const loading = performance.now();
    const engine = FiltersEngine.deserialize(bytes);
    sets[name] = {
      compileMs: Math.round(compileMs),
      loadMs: Math.round((performance.now() - loading) * 10) / 10,
      compiledMb: Math.round(bytes.length / 1e5) / 10,
    };
    if (RULE_SETS[name].network) engines.push(engine);
  }
  const urls = Array.from(
    { length: 20_000 },
    (_, i) => `https://cdn${i % 97}.example${i % 13}.net/assets/${i % 7 === 0 ? 'ads/' : ''}file${i}.js?v=${i}`,
  );
  for (const url of urls.slice(0, 500))
    for (const engine of engines)
      engine.match(Request.fromRawDetails({ url, sourceUrl: 'https://news.example.org/a', type: 'script' }));
  const started = performance.now();
  for (const url of urls) {
    const request = Request.fromRawDetails({ url, sourceUrl: 'https://news.example.org/a', type: 'script' });
    for (const engine of engines) engine.match(request);
  }
  return { sets, matchMicroseconds: Math.round((((performance.now() - started) * 1000) / urls.length) * 10) / 10 };
}
