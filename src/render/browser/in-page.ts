// In-page code, handed to the page: the functions of src/render/in-page/, type-checked there with the
// DOM library and without Node's (their own tsconfig.json), are passed to page.evaluate as
// functions, or as the source of a script for new documents. See docs/architecture.md.

/**
 * `fn` as the page may run it. A transpiler that keeps function names (tsx, which runs the tests)
 * wraps a function's inner functions in calls to a helper of its module, `__name`, that the page
 * has not got: the source handed over then defines it first. `helpers` are function declarations
 * of `fn`'s module that `fn` calls: they reach the page with it, declared before it runs (under
 * the name their source gives them, the one `fn`'s source calls them by). Otherwise `fn` itself.
 */
export function inPage<F extends (...args: never[]) => unknown>(
  fn: F,
  helpers: ReadonlyArray<(...args: never[]) => unknown> = [],
): F {
  const source = fn.toString();
  if (helpers.length === 0 && !source.includes('__name(')) return fn;
  const declared = helpers.map((helper) => `${String(helper)}\n`).join('');
  const portable = ((...args: Parameters<F>) => fn(...args)) as F;
  portable.toString = () =>
    `function (...args) { const __name = (target) => target;\n${declared}return (${source}).apply(this, args); }`;
  return portable;
}

/** Source that calls `fn` with `args` (JSON) when it runs: a script for new documents. */
export function inPageSource<A extends unknown[]>(fn: (...args: A) => unknown, ...args: A): string {
  return `(${String(inPage(fn))})(${args.map((arg) => JSON.stringify(arg)).join(', ')});`;
}
