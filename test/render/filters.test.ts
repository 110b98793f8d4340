// The blocking rules' compile (src/render/steps/filters.ts): a rule set compiled from the installed lists
// arrives serialized from a child process, so the parsed filters never fill this process's heap.

import { readFileSync } from 'node:fs';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { adblocker, compileRuleSet } from '../../src/render/steps/filters.ts';

const test = suite('filters');

test('compiling ads from the lists leaves this heap as it was, and the engine blocks an ad script', async () => {
  const { FiltersEngine, Request } = await adblocker();
  const before = process.memoryUsage().heapUsed;
  // Parsed in this process, the ads engine held ≈ 170 MB of heap for as long as it lived.
  const engine = FiltersEngine.deserialize(await compileRuleSet('ads'));
  const grownMb = (process.memoryUsage().heapUsed - before) / 1024 / 1024;
  assert.ok(grownMb < 50, `the heap grew by ${grownMb.toFixed(0)} MB`);
  const ad = Request.fromRawDetails({
    url: 'https://pagead2.googlesyndication.com/pagead/js/adsbygoogle.js',
    sourceUrl: 'https://news.example.com/',
    type: 'script',
  });
  assert.ok(engine.match(ad).match, 'adsbygoogle.js is not blocked');
});

test('rule sets asked for together are compiled one after another, never two children at once', async () => {
  const children = () =>
    readFileSync(`/proc/self/task/${process.pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
  let most = 0;
  const watch = setInterval(() => (most = Math.max(most, children().length)), 10);
  try {
    const compiled = await Promise.all([compileRuleSet('trackers'), compileRuleSet('socials')]);
    assert.ok(compiled.every((bytes) => bytes.length > 100_000));
  } finally {
    clearInterval(watch);
  }
  assert.is(most, 1);
});

test.run();
