// Comparing captures' visible text: lines whitespace-normalised, volatile text left out, the changed lines bounded.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  compareTexts,
  ignoreTextProblem,
  IgnoreTextTimeout,
  TEXT_DIFF_MAX_BYTES,
  TEXT_DIFF_MAX_LINES,
} from '../../src/monitors/text.ts';

const text = suite('comparing texts');

text('the same text, spaced differently, has not changed', () => {
  const verdict = compareTexts(
    'Plans\n\nPro   $19 / month\n  Team\t$49 / month',
    'Plans\nPro $19 / month\nTeam $49 / month\n',
  );
  assert.equal(verdict, { changed: false, diff: [] });
});

text('a changed, an added and a removed line, in order', () => {
  const before = ['Terms of service', 'You may cancel at any time.', 'Refunds within 14 days.', 'Contact us.'].join(
    '\n',
  );
  const after = ['Terms of service', 'You may cancel at the end of a month.', 'Contact us.', 'Prices may change.'].join(
    '\n',
  );
  assert.equal(compareTexts(before, after).diff, [
    { before: 'You may cancel at any time.', after: 'You may cancel at the end of a month.' },
    { before: 'Refunds within 14 days.', after: null },
    { before: null, after: 'Prices may change.' },
  ]);
});

text('ignore_text leaves volatile text out; a line that was only volatile text is no line', () => {
  const ignore = ['\\d{4}-\\d{2}-\\d{2}T[\\d:.]+Z', '^Visitors: \\d+$'];
  const at = (moment: string, visitors: number) =>
    `Status: all systems operational\nChecked at ${moment}\nVisitors: ${visitors}`;
  const same = compareTexts(at('2026-12-07T10:00:00.000Z', 10), at('2026-12-07T10:05:00.000Z', 12), ignore);
  assert.equal(same, { changed: false, diff: [] });
  const changed = compareTexts(
    at('2026-12-07T10:00:00.000Z', 10),
    at('2026-12-07T10:05:00.000Z', 12).replace('operational', 'degraded'),
    ignore,
  );
  assert.equal(changed.diff, [{ before: 'Status: all systems operational', after: 'Status: all systems degraded' }]);
});

text('the diff is bounded: at most 50 lines and 8 KB, long lines shown around their change', () => {
  const many = (prefix: string) => Array.from({ length: 200 }, (_, i) => `${prefix} line ${i}`).join('\n');
  const lines = compareTexts(many('old'), many('new')).diff;
  assert.is(lines.length, TEXT_DIFF_MAX_LINES);
  const long = (word: string) =>
    Array.from({ length: 40 }, (_, i) => `sentence ${i} ${i === 30 ? word : 'same'}.`).join(' ');
  const shown = compareTexts(long('before'), long('after')).diff;
  assert.is(shown.length, 1);
  assert.ok(shown[0].before!.startsWith('…') && shown[0].before!.includes('before'), shown[0].before!);
  assert.ok(shown[0].after!.includes('after'));
  const wide = (tag: string) => Array.from({ length: 60 }, (_, i) => `${tag} ${i} ${'x'.repeat(400)}`).join('\n');
  const bytes = Buffer.byteLength(JSON.stringify(compareTexts(wide('a'), wide('b')).diff));
  assert.ok(bytes <= TEXT_DIFF_MAX_BYTES, String(bytes));
});

text('a page changed everywhere is diffed without running away', () => {
  const page = (seed: number) => Array.from({ length: 20_000 }, (_, i) => `row ${(i * seed) % 9973}`).join('\n');
  const started = performance.now();
  const verdict = compareTexts(page(7), page(13));
  assert.ok(verdict.changed);
  assert.ok(verdict.diff.length > 0 && verdict.diff.length <= TEXT_DIFF_MAX_LINES);
  assert.ok(performance.now() - started < 5000, `${performance.now() - started} ms`);
});

text('ignore_text is validated: a list of at most 20 safe patterns of at most 200 characters', () => {
  assert.is(ignoreTextProblem(['\\d+ visitors', 'Updated .*']), undefined);
  assert.is(ignoreTextProblem('\\d+'), 'must be a list of regular expressions');
  assert.match(ignoreTextProblem(['(unclosed'])!, 'pattern 1 is not a valid regular expression');
  assert.match(ignoreTextProblem(['ok', '(a+)+$'])!, 'pattern 2 nests quantifiers');
  assert.match(ignoreTextProblem(['x'.repeat(201)])!, 'pattern 1 must be a string of 1 to 200 characters');
  assert.match(ignoreTextProblem(Array.from({ length: 21 }, () => 'a'))!, 'at most 20 patterns');
});

text('a pattern slow on the text is stopped, not left to block the worker', () => {
  // Overlapping alternatives, not nested quantifiers: it passes validation, and is cut short at run time.
  const slow = ['^(a|a)*$'];
  assert.is(ignoreTextProblem(slow), undefined);
  const line = `${'a'.repeat(40)}!`;
  const started = performance.now();
  assert.throws(
    () => compareTexts(`${line}\n${line}`, line, slow),
    (err: unknown) => err instanceof IgnoreTextTimeout,
  );
  assert.ok(performance.now() - started < 2000, `${performance.now() - started} ms`);
});

text.run();
