// Comparing two captures' visible text line by line: whitespace normalised, volatile text (ignore_text)
// left out, and the changed lines, bounded, for the webhook and the dashboard (docs/monitors.md).
import vm from 'node:vm';
import { createRequire } from 'node:module';
import type { TextChange } from '../domain/monitor.ts';

// safe-regex2 is CommonJS.
const isSafePattern = createRequire(import.meta.url)('safe-regex2') as (pattern: RegExp) => boolean;

/** The most patterns `ignore_text` takes, and the longest one. */
export const IGNORE_TEXT_MAX_PATTERNS = 20;
export const IGNORE_TEXT_MAX_LENGTH = 200;

/** What `text_diff` carries at most: lines, and bytes of JSON. */
export const TEXT_DIFF_MAX_LINES = 50;
export const TEXT_DIFF_MAX_BYTES = 8 * 1024;

/** How long applying `ignore_text` to one capture's text may take before the text comparison is given up. */
const IGNORE_TEXT_BUDGET_MS = 250;

/** The longest a line of `text_diff` is shown (characters), around its first change. */
const SHOWN_LINE_LENGTH = 300;

/** Edits past which two texts are not diffed line by line: everything between their common start and end changed. */
const MAX_EDITS = 2000;

/** The problem with an `ignore_text` value, or undefined when it is a list of usable patterns. */
export function ignoreTextProblem(value: unknown): string | undefined {
  if (!Array.isArray(value)) return 'must be a list of regular expressions';
  if (value.length > IGNORE_TEXT_MAX_PATTERNS) return `must have at most ${IGNORE_TEXT_MAX_PATTERNS} patterns`;
  for (const [index, pattern] of value.entries()) {
    if (typeof pattern !== 'string' || pattern === '' || pattern.length > IGNORE_TEXT_MAX_LENGTH)
      return `pattern ${index + 1} must be a string of 1 to ${IGNORE_TEXT_MAX_LENGTH} characters`;
    let compiled: RegExp;
    try {
      compiled = new RegExp(pattern, 'gu');
    } catch {
      return `pattern ${index + 1} is not a valid regular expression`;
    }
    // Nested quantifiers can take exponential time on a hostile page's text.
    if (!isSafePattern(compiled)) return `pattern ${index + 1} nests quantifiers (like (a+)+): write it without`;
  }
  return undefined;
}

/** Text cut into lines, each with its runs of whitespace made one space, empty lines dropped. */
export function textLines(text: string): string[] {
  return text
    .split(/\r\n|[\n\r\u2028\u2029]/)
    .map((line) => line.replace(/\s+/gu, ' ').trim())
    .filter((line) => line !== '');
}

/** Thrown when `ignore_text` took longer than its budget on a page's text. */
export class IgnoreTextTimeout extends Error {}

/**
 * Each line with the matches of `patterns` taken out (and its whitespace made one space again).
 * The patterns run in a context of their own under a time limit: a pattern slow on this text ends
 * the comparison (IgnoreTextTimeout) instead of the worker's event loop.
 */
function withoutIgnored(lines: string[], patterns: readonly string[]): string[] {
  if (patterns.length === 0) return lines;
  const context = vm.createContext({ lines, patterns });
  try {
    return vm.runInContext(
      `const expressions = patterns.map((pattern) => new RegExp(pattern, 'gu'));
       lines.map((line) => expressions.reduce((rest, expression) => rest.replace(expression, ''), line).replace(/\\s+/gu, ' ').trim());`,
      context,
      { timeout: IGNORE_TEXT_BUDGET_MS },
    ) as string[];
  } catch (err) {
    if ((err as { code?: string }).code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') throw new IgnoreTextTimeout(String(err));
    throw err;
  }
}

type Edit = { kind: 'same' | 'removed' | 'added'; line: number };

/**
 * The shortest edit script from `a` to `b` (Myers' O(ND) diff), or undefined past MAX_EDITS.
 * `a` and `b` are compared by value.
 */
function editScript(a: readonly string[], b: readonly string[]): Edit[] | undefined {
  const n = a.length;
  const m = b.length;
  const max = n + m;
  const offset = max + 1;
  const furthest = new Int32Array(2 * max + 3);
  // After each round d: the furthest x on diagonals -d-1 … d+1.
  const trace: Int32Array[] = [];
  for (let d = 0; d <= Math.min(max, MAX_EDITS); d++) {
    for (let k = -d; k <= d; k += 2) {
      let x =
        k === -d || (k !== d && furthest[offset + k - 1] < furthest[offset + k + 1])
          ? furthest[offset + k + 1]
          : furthest[offset + k - 1] + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      furthest[offset + k] = x;
      if (x >= n && y >= m) {
        trace.push(furthest.slice(offset - d - 1, offset + d + 2));
        return backtrack(trace, n, m);
      }
    }
    trace.push(furthest.slice(offset - d - 1, offset + d + 2));
  }
  return undefined;
}

/** The edits the rounds of `editScript` found, first to last. */
function backtrack(trace: Int32Array[], n: number, m: number): Edit[] {
  const edits: Edit[] = [];
  let x = n;
  let y = m;
  for (let d = trace.length - 1; d > 0; d--) {
    const before = trace[d - 1];
    // Round d-1 kept diagonals -d … d at indices 0 … 2d.
    const at = (k: number) => before[k + d];
    const k = x - y;
    const fromK = k === -d || (k !== d && at(k - 1) < at(k + 1)) ? k + 1 : k - 1;
    const fromX = at(fromK);
    const fromY = fromX - fromK;
    // One edit from (fromX, fromY): down (a line added) from diagonal k+1, right (one removed) from k-1;
    // then lines alike up to (x, y).
    const added = fromK === k + 1;
    const editX = added ? fromX : fromX + 1;
    while (x > editX) {
      edits.push({ kind: 'same', line: --x });
      y--;
    }
    edits.push(added ? { kind: 'added', line: fromY } : { kind: 'removed', line: fromX });
    x = fromX;
    y = fromY;
  }
  while (x > 0) edits.push({ kind: 'same', line: --x });
  return edits.reverse();
}

/** A line as `text_diff` shows it: at most SHOWN_LINE_LENGTH characters, from a little before `from`. */
function shown(line: string, from = 0): string {
  const start = from > 60 ? from - 40 : 0;
  const end = start + SHOWN_LINE_LENGTH;
  return `${start > 0 ? '…' : ''}${line.slice(start, end)}${line.length > end ? '…' : ''}`;
}

/** Where two lines first differ. */
function firstDifference(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

/**
 * The lines changed between two texts, compared by `keys` (the lines with volatile text left out),
 * shown as the lines were: a changed line is `{before, after}`, an added one has `before: null`, a
 * removed one `after: null`. Bounded to TEXT_DIFF_MAX_LINES entries and TEXT_DIFF_MAX_BYTES of JSON.
 */
function changedLines(
  before: { lines: string[]; keys: string[] },
  after: { lines: string[]; keys: string[] },
): TextChange[] {
  const a = before.keys;
  const b = after.keys;
  // The common start and end are left out of the diff: most pages change in one place.
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const middleA = a.slice(head, a.length - tail);
  const middleB = b.slice(head, b.length - tail);
  const edits = editScript(middleA, middleB) ?? [
    ...middleA.map((_, line) => ({ kind: 'removed' as const, line })),
    ...middleB.map((_, line) => ({ kind: 'added' as const, line })),
  ];
  const changes: TextChange[] = [];
  // Each run of edits between unchanged lines: its removed lines paired with its added ones.
  let removed: number[] = [];
  let added: number[] = [];
  const flush = () => {
    for (let i = 0; i < Math.max(removed.length, added.length); i++) {
      const was = i < removed.length ? before.lines[head + removed[i]] : null;
      const is = i < added.length ? after.lines[head + added[i]] : null;
      const from = was !== null && is !== null ? firstDifference(was, is) : 0;
      changes.push({ before: was === null ? null : shown(was, from), after: is === null ? null : shown(is, from) });
    }
    removed = [];
    added = [];
  };
  for (const edit of edits) {
    if (edit.kind === 'same') flush();
    else (edit.kind === 'removed' ? removed : added).push(edit.line);
  }
  flush();
  return bounded(changes);
}

/** The first changes that fit TEXT_DIFF_MAX_LINES and TEXT_DIFF_MAX_BYTES. */
function bounded(changes: TextChange[]): TextChange[] {
  const kept: TextChange[] = [];
  let bytes = 2;
  for (const change of changes.slice(0, TEXT_DIFF_MAX_LINES)) {
    const size = Buffer.byteLength(JSON.stringify(change)) + 1;
    if (bytes + size > TEXT_DIFF_MAX_BYTES) break;
    bytes += size;
    kept.push(change);
  }
  return kept;
}

/** What comparing two texts found: whether they differ, and the changed lines (bounded). */
export interface TextComparison {
  changed: boolean;
  diff: TextChange[];
}

/**
 * Compares the previous capture's visible text with the current one's, line by line, whitespace
 * normalised and the matches of `ignoreText` left out. Throws IgnoreTextTimeout when the patterns
 * take too long on these texts.
 */
export function compareTexts(previous: string, current: string, ignoreText: readonly string[] = []): TextComparison {
  const side = (text: string) => {
    const lines = textLines(text);
    const keys = withoutIgnored(lines, ignoreText);
    // A line that was only volatile text is no line.
    const kept = keys.map((key, index) => ({ key, line: lines[index] })).filter(({ key }) => key !== '');
    return { lines: kept.map(({ line }) => line), keys: kept.map(({ key }) => key) };
  };
  const before = side(previous);
  const after = side(current);
  const same = before.keys.length === after.keys.length && before.keys.every((key, i) => key === after.keys[i]);
  if (same) return { changed: false, diff: [] };
  return { changed: true, diff: changedLines(before, after) };
}
