// Loaded before every test file (test/run.ts). It rewrites three lines of uvu as it loads:
// - uvu's runner returns from a `finally` block, so an error thrown in a suite's `before` hook
//   vanishes and the file shows only "(0 / N)"; the error is reported like a failed test's.
// - uvu prints a test's name only when the file ends, so a file killed for hanging would not say
//   where; each test and hook is recorded as it starts, and SIGUSR2 prints it with what is still
//   open ("hung in: suite › test"), which the runner asks for before it kills the file.
import { registerHooks } from 'node:module';

const rewrites: [line: string, replacement: string][] = [
  [
    'for (hook of before) await hook(state);',
    "globalThis.__uvuAt = name + ' › before hook'; try { for (hook of before) await hook(state); } catch (err) { errors += format('before hook', err, name); throw err; }",
  ],
  ['state.__test__ = test.name;', "state.__test__ = test.name; globalThis.__uvuAt = name + ' › ' + test.name;"],
  [
    'for (hook of after) await hook(state);',
    "globalThis.__uvuAt = name + ' › after hook'; for (hook of after) await hook(state);",
  ],
];

registerHooks({
  load(url, context, nextLoad) {
    const loaded = nextLoad(url, context);
    if (!/\/node_modules\/uvu\/dist\/index\.mjs$/.test(url)) return loaded;
    let source = String(loaded.source);
    for (const [line, replacement] of rewrites) {
      // An uvu upgrade that moved a line must be noticed, not silently lose the report.
      if (!source.includes(line)) throw new Error(`test/helpers/uvu-preload.ts: uvu no longer has "${line}"`);
      source = source.replace(line, replacement);
    }
    return { ...loaded, source };
  },
});

process.on('SIGUSR2', () => {
  const at = (globalThis as { __uvuAt?: string }).__uvuAt ?? 'loading the file';
  const open = new Map<string, number>();
  for (const kind of process.getActiveResourcesInfo()) open.set(kind, (open.get(kind) ?? 0) + 1);
  const resources = [...open].map(([kind, count]) => `${count} ${kind}`).join(', ');
  // test/run.ts reads the first line.
  process.stderr.write(`\nhung in: ${at}\n  still open: ${resources}\n`);
});
