// How the service grows its heap (src/heap.ts): the flag it sets, and that this Node's V8 knows it.
import { execFileSync } from 'node:child_process';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { HEAP_GROWING_PERCENT, heapFlags } from '../src/heap.ts';

const test = suite('the heap');

test('the service sets a growing factor of its own', () => {
  assert.equal(heapFlags([]), [`--heap-growing-percent=${HEAP_GROWING_PERCENT}`]);
  assert.equal(heapFlags(['--enable-source-maps']), [`--heap-growing-percent=${HEAP_GROWING_PERCENT}`]);
});

test("an operator's own factor on the command line wins", () => {
  assert.equal(heapFlags(['--heap-growing-percent=300']), []);
  assert.equal(heapFlags(['--heap_growing_percent', '50']), []);
});

test("this Node's V8 knows the flag", () => {
  assert.match(execFileSync(process.execPath, ['--v8-options'], { encoding: 'utf8' }), /--heap-growing-percent\b/);
  // Node refuses a V8 flag it does not know on its command line.
  const out = execFileSync(process.execPath, [...heapFlags([]), '-e', "console.log('ok')"], { encoding: 'utf8' });
  assert.is(out.trim(), 'ok');
});

test.run();
