// Loaded before every test file (test/run.ts): uvu's runner returns from a `finally` block, so an
// error thrown in a suite's `before` hook vanishes and the file shows only "(0 / N)". This
// rewrites that one line of uvu as it loads, so the error is reported like a failed test's.
import { registerHooks } from 'node:module';

const hookLine = 'for (hook of before) await hook(state);';
const reported =
  "try { for (hook of before) await hook(state); } catch (err) { errors += format('before hook', err, name); throw err; }";

registerHooks({
  load(url, context, nextLoad) {
    const loaded = nextLoad(url, context);
    if (!/\/node_modules\/uvu\/dist\/index\.mjs$/.test(url)) return loaded;
    const source = String(loaded.source);
    // An uvu upgrade that moved the line must be noticed, not silently lose the report.
    if (!source.includes(hookLine)) throw new Error(`test/helpers/uvu-hook-errors.ts: uvu no longer has "${hookLine}"`);
    return { ...loaded, source: source.replace(hookLine, reported) };
  },
});
