// The format registry: every format's name, aliases, content type and extension come from one table,
// and the parsers, the file names, /files, OpenAPI and the playground agree with it.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { fileExtension, fileFormat, isFileName, newFileName } from '../../src/domain/files.ts';
import {
  animationFormats,
  contentTypes,
  formatFacts,
  formatNamed,
  formatNames,
  imageFormats,
  takeFormatNames,
  takeFormats,
} from '../../src/domain/formats.ts';
import { parameterByName } from '../../src/domain/parameters.ts';
import { parseAnimateParams } from '../../src/http/animate.ts';
import { extensionOf } from '../../src/http/dashboard/playground-request.ts';
import { openApiDocument } from '../../src/http/openapi.ts';
import { parseTakeParams, type RawParams } from '../../src/http/params.ts';

const formats = suite('the format registry');
const query = (qs: string): RawParams => ({ kind: 'query', entries: [...new URLSearchParams(qs)] });

formats('each name means one format: names, aliases and extensions never collide', () => {
  const names = formatNames.flatMap((format) => [format, ...(formatFacts(format).aliases ?? [])]);
  assert.is(new Set(names).size, names.length);
  const extensions = formatNames.map(fileExtension);
  assert.is(new Set(extensions).size, extensions.length);
  assert.is(formatNamed('jpg'), 'jpeg');
  assert.is(formatNamed('jpeg'), 'jpeg');
  assert.is(formatNamed('bmp'), undefined);
  assert.is(formatNamed('toString'), undefined);
});

formats('/api/take accepts every take format by its name and alias, and records its own name', () => {
  assert.equal(parameterByName.get('format')!.type, { kind: 'enum', values: takeFormatNames });
  for (const name of takeFormatNames) {
    const parsed = parseTakeParams(query(`url=https://a.example&format=${name}`));
    assert.ok('request' in parsed, name);
    assert.is(parsed.request.options.format, formatNamed(name), name);
  }
  for (const format of formatNames.filter((f) => !takeFormats.includes(f as never)))
    assert.ok('problems' in parseTakeParams(query(`url=https://a.example&format=${format}`)), format);
});

formats('/api/animate accepts exactly the animation formats', () => {
  assert.equal(animationFormats, ['mp4', 'webm', 'mov', 'avi', 'gif']);
  for (const format of formatNames) {
    const parsed = parseAnimateParams(query(`url=https://a.example&format=${format}`));
    assert.is('request' in parsed, animationFormats.includes(format as never), format);
    if ('request' in parsed) assert.is(parsed.request.options.format, format);
  }
});

formats('a file name carries the extension of its format, and /files reads the format back from it', () => {
  const tomorrow = new Date(Date.now() + 24 * 3600 * 1000);
  for (const format of formatNames) {
    const name = newFileName(format, tomorrow);
    assert.ok(name.endsWith(`.${formatFacts(format).extension}`), name);
    assert.ok(isFileName(name), name);
    assert.is(fileFormat(name), format);
  }
  assert.is(isFileName(`20260101-${'a'.repeat(32)}.jpeg`), false);
  // The playground's curl line names the file as /files does (jpg, not jpeg; md for markdown).
  assert.is(extensionOf('jpg'), 'jpg');
  assert.is(extensionOf('jpeg'), 'jpg');
  assert.is(extensionOf('markdown'), 'md');
  assert.is(extensionOf('heif'), 'heic');
});

formats("OpenAPI's answers carry each format's content type from the table", () => {
  const document = openApiDocument('http://shots.test') as {
    paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, unknown> }> }>>;
  };
  const types = (path: string) =>
    Object.keys(document.paths[path].get.responses['200'].content ?? {})
      .filter((type) => type !== 'application/json')
      .sort();
  const of = (list: readonly string[]) =>
    [...new Set(list.map((format) => contentTypes[format as keyof typeof contentTypes]))].sort();
  assert.equal(types('/api/take'), of(takeFormats));
  assert.equal(types('/api/animate'), of(animationFormats));
  assert.equal(types('/files/{fileName}'), of(formatNames));
});

formats('kinds: the images are what image-only options need', () => {
  assert.equal(
    imageFormats,
    formatNames.filter((format) => formatFacts(format).kind === 'image'),
  );
  const refused = (format: string) =>
    'problems' in parseTakeParams(query(`url=https://a.example&format=${format}&image_width=100`));
  for (const name of takeFormatNames) assert.is(refused(name), formatFacts(formatNamed(name)!).kind !== 'image', name);
});

formats.run();
