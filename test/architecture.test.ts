// The import graph of src/ and actors/ has no cycle: not between files, and not between folders;
// src/render imports nothing of actors/; no module of a render's path keeps per-render state; the
// options' types have no field their parameter table has no row for; and the output formats are
// declared in their one table, src/domain/formats.ts.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { recordingParameters } from '../src/domain/animation.ts';
import { parameters } from '../src/domain/parameters.ts';
import { contentTypes, formatFacts, formatNames } from '../src/domain/formats.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const architecture = suite('the import graph');

/** Every .ts file under `dir`, relative to the repository root. */
function sources(dir: string): string[] {
  return readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const relative = path.join(dir, entry.name);
    if (entry.isDirectory()) return sources(relative);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [relative] : [];
  });
}

/** file → the files of this tree it imports (static `import … from`, `export … from`, dynamic `import()`). */
function importGraph(): Map<string, Set<string>> {
  const files = [...sources('src'), ...sources('actors')];
  const known = new Set(files);
  const graph = new Map<string, Set<string>>();
  for (const file of files) {
    const text = readFileSync(path.join(root, file), 'utf8');
    const targets = new Set<string>();
    for (const match of text.matchAll(/(?:from\s+|import\s*\(\s*)['"](\.{1,2}\/[^'"]+)['"]/g)) {
      const target = path.normalize(path.join(path.dirname(file), match[1]));
      if (known.has(target)) targets.add(target);
    }
    graph.set(file, targets);
  }
  return graph;
}

/** The strongly connected components with more than one node (Tarjan): each is a cycle. */
function cycles(graph: Map<string, Set<string>>): string[][] {
  let index = 0;
  const indexOf = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string) => {
    indexOf.set(node, index);
    low.set(node, index++);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!indexOf.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, indexOf.get(next)!));
      }
    }
    if (low.get(node) === indexOf.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!indexOf.has(node)) visit(node);
  return found;
}

architecture('no two files import each other, directly or around a loop', () => {
  assert.equal(cycles(importGraph()), []);
});

architecture('no two folders import each other (each folder of src/ and actors/ with its subfolders)', () => {
  // A folder is a first-level folder of src/ (http, jetstream, render, …) or actors/; src/*.ts files stand alone.
  const folderOf = (file: string) => {
    const parts = file.split(path.sep);
    return parts[0] === 'src' && parts.length > 2
      ? `src/${parts[1]}`
      : parts.length > 1 && parts[0] !== 'src'
        ? parts[0]
        : file;
  };
  const folders = new Map<string, Set<string>>();
  for (const [file, targets] of importGraph()) {
    const from = folderOf(file);
    const edges = folders.get(from) ?? new Set<string>();
    for (const target of targets) if (folderOf(target) !== from) edges.add(folderOf(target));
    folders.set(from, edges);
  }
  assert.equal(cycles(folders), []);
});

architecture('actors/ import nothing of the browser, the broker or HTTP', () => {
  const offending = [...importGraph()]
    .filter(([file]) => file.startsWith('actors'))
    .flatMap(([file, targets]) =>
      [...targets].filter((t) => /^src\/(render|jetstream|http|storage)\//.test(t)).map((t) => `${file} → ${t}`),
    );
  assert.equal(offending, []);
});

architecture("src/render imports nothing of actors/: the failure rules come in as the machine's judge", () => {
  const offending = [...importGraph()]
    .filter(([file]) => file.startsWith(`src${path.sep}render${path.sep}`))
    .flatMap(([file, targets]) => [...targets].filter((t) => t.startsWith('actors')).map((t) => `${file} → ${t}`));
  assert.equal(offending, []);
});

/**
 * The module-level state of a render's path that is not a render's: each keyed by, or made once
 * for, something that outlives a render (a browser, a CDP session, a NATS connection, the worker,
 * the process). Anything else a module keeps would be shared by every render that runs.
 */
const PROCESS_STATE: Record<string, string> = {
  'src/render/browser/supervisor.ts gpuRendering': 'per browser: whether it renders on a GPU, asked once',
  'src/render/browser/warm-page.ts headlessShells': 'per browser: whether it is chromium-headless-shell, asked once',
  'src/render/browser/cdp.ts faces': "per CDP session: the session's typed face, made once",
  'src/render/steps/emulation.ts contextIds': "per CDP session: its page's browser context id, asked once",
  'src/render/steps/filters.ts engines': 'per process: the compiled filter lists, by rule set',
  'src/render/steps/filters.ts library': 'per process: the adblocker library, imported once',
  'src/render/steps/filters.ts compiling': 'per process: compilations run one at a time',
  'src/render/outputs/pdf-document.ts L': 'per process: pdf-lib, imported once',
  'src/render/outputs/pdf-document.ts watermarkFont': "per process: the watermark's font, read once",
  'src/render/outputs/document.ts readabilitySource': "per process: Readability's source, read once",
  'src/render/outputs/document.ts converter': 'per process: the Markdown converter, made once',
  'src/render/steps/consent.ts source': "per process: the consent script's source, built once",
  'src/render/outputs/image.ts sharpModule': 'per process: sharp, imported once',
  'src/render/browser/sandbox.ts wrappers': "per process: the browser's launch wrappers, by sandbox",
  'src/render/browser/sandbox.ts wrapperDir': "per process: the launch wrappers' folder",
  'src/render/browser/fonts.ts written': 'per process: the fontconfig file, written once',
  'src/renders/run.ts machines': "per worker: the render machine with the worker's actors, provided once",
  'src/renders/done.ts waiting': 'per NATS connection: who waits for which done message on its one subscription',
  'src/renders/done.ts inboxes': 'per NATS connection: its one subscription to done messages',
};

/** `new Map`, `new WeakMap`, `new Set`, `new WeakSet`, `new AsyncLocalStorage`: a store at module level. */
const STORES = new Set(['Map', 'WeakMap', 'Set', 'WeakSet', 'AsyncLocalStorage']);

/**
 * The module-level variables of `file` that can hold state: every `let` or `var`, and every `const`
 * made a store (STORES). A Set made of literals only is a fixed table, not state.
 */
function moduleState(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(path.join(root, file), 'utf8'), ts.ScriptTarget.Latest);
  const fixedTable = (init: ts.NewExpression) =>
    init.arguments?.length === 1 &&
    ts.isArrayLiteralExpression(init.arguments[0]) &&
    init.arguments[0].elements.every((element) => ts.isStringLiteral(element) || ts.isNumericLiteral(element));
  return source.statements.filter(ts.isVariableStatement).flatMap((statement) => {
    const constant = (statement.declarationList.flags & ts.NodeFlags.Const) !== 0;
    return statement.declarationList.declarations
      .filter(({ initializer }) => {
        if (!constant) return true;
        if (!initializer || !ts.isNewExpression(initializer)) return false;
        return STORES.has(initializer.expression.getText(source)) && !fixedTable(initializer);
      })
      .map((declaration) => `${file.split(path.sep).join('/')} ${declaration.name.getText(source)}`);
  });
}

architecture('no module of src/render, src/renders or actors/ keeps per-render state', () => {
  const found = [...sources('src/render'), ...sources('src/renders'), ...sources('actors')].flatMap(moduleState);
  assert.equal(
    found.filter((state) => !(state in PROCESS_STATE)),
    [],
    "per-render state goes on the PageStep, the Progress or the machine's input, never in a module",
  );
  assert.equal(
    Object.keys(PROCESS_STATE).filter((state) => !found.includes(state)),
    [],
    'an allowed state that is gone leaves the list',
  );
});

/** The fields of each exported type `[file, type]`, as the compiler sees them (however the type is written). */
function fieldsOf(types: [file: string, type: string][]): string[][] {
  const config = ts.readConfigFile(path.join(root, 'tsconfig.json'), ts.sys.readFile).config;
  const { options } = ts.parseJsonConfigFileContent(config, ts.sys, root);
  // Node's own types play no part in these: leaving them out keeps the check quick.
  const program = ts.createProgram(
    types.map(([file]) => path.join(root, file)),
    { ...options, types: [] },
  );
  const checker = program.getTypeChecker();
  return types.map(([file, type]) => {
    const module = checker.getSymbolAtLocation(program.getSourceFile(path.join(root, file))!)!;
    const symbol = checker.getExportsOfModule(module).find((exported) => exported.name === type)!;
    return checker.getPropertiesOfType(checker.getDeclaredTypeOfSymbol(symbol)).map((field) => field.name);
  });
}

architecture('every field of the options is a row of its parameter table, and every row a field', () => {
  const [render, control, animation] = fieldsOf([
    ['src/domain/options.ts', 'RenderOptions'],
    ['src/http/params.ts', 'TakeControl'],
    ['src/domain/animation.ts', 'AnimationOptions'],
  ]);
  const differences = (fields: string[], rows: readonly { name: string }[]) => ({
    withoutRow: fields.filter((field) => !rows.some((row) => row.name === field)),
    withoutField: rows.map((row) => row.name).filter((name) => !fields.includes(name)),
  });
  const none = { withoutRow: [], withoutField: [] };
  const optionRows = parameters.filter((row) => row.role === 'option');
  assert.equal(differences(render, optionRows), none, 'RenderOptions and the option rows of the table');
  const controlRows = parameters.filter((row) => row.role === 'control');
  assert.equal(differences(control, controlRows), none, 'TakeControl and the control rows of the table');
  assert.equal(differences(animation, recordingParameters), none, "AnimationOptions and the recording's rows");
});

architecture('formats are declared only in src/domain/formats.ts: no list of them, no content type elsewhere', () => {
  // html and markdown are also a page's source and metadata content's formats, and every dashboard page
  // is text/html: a list or a type is only counted as one of formats when it starts with another format.
  const words = (list: readonly string[]) => list.join('|');
  const all = formatNames.flatMap((format) => [format, ...(formatFacts(format).aliases ?? [])]);
  const lead = all.filter((name) => !['html', 'markdown'].includes(name));
  const patterns = [
    // 'png', 'jpeg' or 'png' | 'jpeg': an array, a set or a union of format names.
    new RegExp(`['"](${words(lead)})['"]\\s*[,|]\\s*['"](${words(all)})['"]`),
    // png: …, jpeg: …: an object keyed by format.
    new RegExp(`(^|[{,\\s])['"]?(${words(lead)})['"]?\\s*:[^\\n]*\\n?\\s*['"]?(${words(all)})['"]?\\s*:`, 'm'),
    // case 'jpeg': case 'webp': a switch grouping formats.
    new RegExp(`case\\s+['"](${words(lead)})['"]\\s*:\\s*case\\s+['"](${words(all)})['"]`),
    // 'image/png': a format's content type.
    new RegExp(
      `['"](${words(
        formatNames
          .filter((format) => format !== 'html')
          .map((format) => contentTypes[format].split(';')[0].replace(/[./+-]/g, (c) => `\\${c}`)),
      )})`,
    ),
  ];
  const offending = sources('src')
    .filter((file) => file !== path.join('src', 'domain', 'formats.ts'))
    .flatMap((file) => {
      const text = readFileSync(path.join(root, file), 'utf8');
      return patterns.flatMap((pattern) => {
        const found = pattern.exec(text);
        return found ? [`${file}: ${found[0].trim()}`] : [];
      });
    });
  assert.equal(offending, []);
});

/**
 * The room of a file of src/render: the browser (launch, supervise, lend pages), the steps a render
 * takes on a page, the outputs made from it; in-page/ is the page's own code; the recipes at the top
 * (a render, an animation, a merge, the worker's entry) use all of them.
 */
const RENDER_ROOMS = ['browser', 'steps', 'outputs'] as const;
const RECIPES = ['capture.ts', 'animation.ts', 'merge.ts', 'request-capture.ts'];
/** What each room may import of src/render besides itself: the rooms below it, and the page's own code. */
const ROOMS_BELOW: Record<string, string[]> = {
  browser: ['in-page'],
  steps: ['browser', 'in-page'],
  outputs: ['steps', 'browser', 'in-page'],
  'in-page': [],
};
const roomOf = (file: string) => file.split(path.sep)[2];

architecture('src/render in three rooms: outputs use the steps, the steps use the browser, never upwards', () => {
  const offending = [...importGraph()]
    .filter(([file]) => file.startsWith(`src${path.sep}render${path.sep}`) && roomOf(file) in ROOMS_BELOW)
    .flatMap(([file, targets]) =>
      [...targets]
        .filter((target) => target.startsWith(`src${path.sep}render${path.sep}`))
        .filter((target) => roomOf(target) !== roomOf(file) && !ROOMS_BELOW[roomOf(file)].includes(roomOf(target)))
        .map((target) => `${file} → ${target}`),
    );
  assert.equal(offending, []);
});

architecture('every file of src/render is in a room, or one of its recipes', () => {
  const loose = sources('src/render').filter((file) => {
    const room = roomOf(file);
    return room.endsWith('.ts') ? !RECIPES.includes(room) : ![...RENDER_ROOMS, 'in-page'].includes(room);
  });
  assert.equal(loose, []);
});

architecture.run();
