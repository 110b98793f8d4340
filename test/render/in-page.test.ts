// Code that runs in the page lives in src/render/in-page/, type-checked with the DOM library and
// without Node's; the render steps hand it over as functions and speak CDP through src/render/browser/cdp.ts.

import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { inPage, inPageSource } from '../../src/render/browser/in-page.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const render = path.join(root, 'src/render');

// Readability's own source is text: a page's CSP may forbid eval, so it cannot be loaded otherwise.
const SOURCE_TEXT = new Set(['document.ts']);

const steps = () =>
  readdirSync(render)
    .filter((name) => name.endsWith('.ts'))
    .map((name) => ({ name, text: readFileSync(path.join(render, name), 'utf8') }));

for (const folder of ['src/render/in-page', 'src/http/dashboard/in-page']) {
  test(`${folder} type-checks with the DOM library and without Node`, () => {
    const run = spawnSync(
      process.execPath,
      ['node_modules/typescript/bin/tsc', '--noEmit', '-p', `${folder}/tsconfig.json`],
      { cwd: root, encoding: 'utf8' },
    );
    assert.is(run.status, 0, `${run.stdout}\n${run.stderr}`.slice(-4000));
  });
}

test('in-page files import nothing but types, of each other or of src/domain', () => {
  const folder = path.join(render, 'in-page');
  for (const name of readdirSync(folder).filter((file) => file.endsWith('.ts'))) {
    const text = readFileSync(path.join(folder, name), 'utf8');
    for (const [line] of text.matchAll(/^import .*$/gm))
      assert.match(line, /^import type .* from '(\.|\.\.\/\.\.\/domain)\/[\w-]+\.ts';$/, name);
  }
});

test('no page step evaluates a string of code, or sends a CDP command by name', () => {
  for (const { name, text } of steps()) {
    if (name === 'cdp.ts') continue;
    assert.not.match(text, /\.send\(\s*['"`][A-Z]\w*\.\w+/, `${name} sends a CDP command by its name`);
    if (!SOURCE_TEXT.has(name))
      assert.not.match(text, /evaluate(<[^>]*>)?\(\s*['"`]/, `${name} evaluates a string of code`);
  }
});

test('in-page functions reach the page whole, whatever the transpiler added to them', async () => {
  // A function with inner named functions: tsx (this test's transpiler) wraps them in __name().
  const sum = (values: number[]) => {
    const twice = (value: number) => value * 2;
    return values.map(twice).reduce((a, b) => a + b, 0);
  };
  const portable = inPage(sum);
  assert.is(portable([1, 2]), 6);
  // Run as the page would run it: from its source alone, with no module around it.
  const fromSource = new Function(`return (${String(portable)});`)() as typeof sum;
  assert.is(fromSource([1, 2, 3]), 12);
  const script = inPageSource(sum, [4]);
  assert.is(new Function(`return ${script.replace(/;$/, '')}`)(), 8);
});

test('an in-page function reaches the page with the helpers it calls', () => {
  const portable = inPage(doubledSum, [double]);
  assert.is(portable([1, 2]), 6);
  // From its source alone, where no module declares the helper.
  const fromSource = new Function(`return (${String(portable)});`)() as typeof doubledSum;
  assert.is(fromSource([1, 2, 3]), 12);
  const alone = new Function(`return (${String(doubledSum)});`)() as typeof doubledSum;
  assert.throws(() => alone([1]), /double is not defined/, 'without the helper the page has not got it');
});

function double(value: number): number {
  return value * 2;
}

function doubledSum(values: number[]): number {
  return values.map((value) => double(value)).reduce((a, b) => a + b, 0);
}

test.run();
