// The playground's request: which rows of the parameter table it offers, the member's choices read
// from a form or the page's URL, and the same request as a signed GET URL and as code. A screenshot
// goes to /api/take, an animation (mode=animate) to /api/animate, each offered from its own table.
import { animateParameters } from '../../domain/animation.ts';
import { fileExtension } from '../../domain/files.ts';
import { formatNamed } from '../../domain/formats.ts';
import { pdfDocumentOptions } from '../../domain/pdf.ts';
import { parameters, type Parameter } from '../../domain/parameters.ts';
import { hmacHex } from '../../signing.ts';

/** The options users try most, by name; a name missing from the table is simply not offered. */
const offered = [
  'url',
  'html',
  'format',
  'viewport_device',
  'viewport_width',
  'viewport_height',
  'full_page',
  'dark_mode',
  'delay',
  'timeout',
  'wait_for_selector',
  'hide_selectors',
  'remove_selectors',
  'disable_animations',
  'mask_selectors',
  'mask_color',
  'save_formats',
  'profile',
  'block_ads',
  'block_cookie_banners',
  'block_trackers',
  'block_chats',
  'cache',
  // A PDF's document operations; not its passwords, which a URL the page shows would carry.
  'pdf_archive',
  'pdf_accessible',
  'pdf_title',
  'pdf_author',
  'pdf_watermark',
  'pdf_watermark_opacity',
  'pdf_watermark_layer',
  'pdf_permissions',
  // To the workspace's default storage: its keys never appear in a URL the page shows.
  'store',
  'storage_path',
];

/** The options of /api/animate users try most (each one a setter of the SDK's AnimateOptions, as the snippet calls it). */
const offeredForAnimation = [
  'url',
  'html',
  'format',
  'duration',
  'scenario',
  'scroll_by',
  'scroll_duration',
  'scroll_delay',
  'scroll_easing',
  'scroll_back',
  'scroll_complete',
  'width',
  'height',
  'aspect_ratio',
  'viewport_device',
  'viewport_width',
  'viewport_height',
  'dark_mode',
  'delay',
  'timeout',
  'hide_selectors',
  'block_ads',
  'block_cookie_banners',
  'cache',
  'store',
  'storage_path',
];

/**
 * Shutterbus's own options the playground offers, beyond ScreenshotOne's: its SDK has no setter for
 * them, so its snippet names them in a comment; the URL and the client carry them.
 */
export const notInScreenshotOneSdk = [
  'remove_selectors',
  'disable_animations',
  'mask_selectors',
  'mask_color',
  'save_formats',
  'profile',
];

/** Rows the playground offers that ScreenshotOne's SDK has no setter for. */
const sdkLacks = new Set<string>([...pdfDocumentOptions, ...notInScreenshotOneSdk]);

/** What the playground makes: a screenshot (/api/take) or an animation (/api/animate). */
export type PlaygroundMode = 'take' | 'animate';

/** The mode a page's `mode` value names; anything else is a screenshot. */
export const modeOf = (value: string | undefined | null): PlaygroundMode => (value === 'animate' ? 'animate' : 'take');

/** The playground's fields: rows of the mode's parameter table, in its order (so grouped as the API reference is). */
export function playgroundFields(mode: PlaygroundMode = 'take'): Parameter[] {
  if (mode === 'animate') return animateParameters.filter((parameter) => offeredForAnimation.includes(parameter.name));
  return parameters.filter((parameter) => offered.includes(parameter.name));
}

/** What a field's menu offers: the table's values; for `format`, each format of its endpoint once, by its own name. */
export function menuValues(parameter: Parameter): readonly string[] {
  const values = parameter.type.kind === 'enum' ? parameter.type.values : [];
  return parameter.name === 'format' ? values.filter((value) => formatNamed(value) === value) : values;
}

/** The menu entry a chosen value selects: a format's alias (`jpg`) selects the format. */
export function menuValue(parameter: Parameter, value: string): string {
  return parameter.name === 'format' ? (formatNamed(value) ?? value) : value;
}

/** A switch that is on unless turned off: its form sends an explicit false when unticked. */
export const onByDefault = (parameter: Parameter) => parameter.default === true || parameter.name === 'cache';

/** The member's choices, in the table's order; a list is one entry per item. */
export type Choices = [name: string, value: string][];

/**
 * Reads the choices from the values given for each name (a form field, or the page's query string).
 * Empty values are left out, as are values equal to the default; a list's textarea is one item a line;
 * of a switch's hidden `false` and ticked `true`, the last one sent wins.
 */
export function readChoices(valuesOf: (name: string) => string[], mode: PlaygroundMode = 'take'): Choices {
  const choices: Choices = [];
  for (const parameter of playgroundFields(mode)) {
    const values = valuesOf(parameter.name).map((value) => value.trim());
    const { type } = parameter;
    if (type.kind === 'list') {
      for (const item of values
        .flatMap((value) => value.split(/\r?\n/))
        .map((item) => item.trim())
        .filter(Boolean))
        choices.push([parameter.name, item]);
      continue;
    }
    const value = values.at(-1);
    if (!value) continue;
    if (type.kind === 'boolean') {
      const on = value === 'true' || value === 'on' || value === '1';
      // Only a change from what the switch is without a choice is written.
      if (on !== onByDefault(parameter)) choices.push([parameter.name, String(on)]);
      continue;
    }
    // Numbers are written as JavaScript writes them, so a snippet signs exactly the same query.
    const canonical =
      (type.kind === 'integer' || type.kind === 'number') && Number.isFinite(Number(value))
        ? String(Number(value))
        : value;
    if (parameter.default !== undefined && String(parameter.default) === canonical) continue;
    choices.push([parameter.name, canonical]);
  }
  return choices;
}

/** The choices as a query string (the playground page's own URL uses it too). */
export function choicesQuery(choices: Choices): string {
  const query = new URLSearchParams();
  for (const [name, value] of choices) query.append(name, value);
  return query.toString();
}

/**
 * The request as a signed GET of /api/take, or /api/animate for an animation (docs/api.md): the raw
 * query with `access_key`, signed, `signature` last.
 */
export function signedTakeUrl(
  baseUrl: string,
  choices: Choices,
  keys: { access_key: string; secret_key: string },
  mode: PlaygroundMode = 'take',
): { path: string; url: string } {
  const query = new URLSearchParams(choicesQuery(choices));
  query.append('access_key', keys.access_key);
  const signed = query.toString();
  const path = `/api/${mode}?${signed}&signature=${hmacHex(keys.secret_key, signed)}`;
  return { path, url: `${baseUrl}${path}` };
}

/** The file name extension a format's output gets, as /files names it (src/domain/formats.ts). */
export function extensionOf(format: string): string {
  const known = formatNamed(format);
  return known ? fileExtension(known) : format;
}

/** A JavaScript literal of a choice's value, typed as the table says. */
function literal(parameter: Parameter | undefined, values: string[]): string {
  const kind = parameter?.type.kind;
  if (kind === 'list') return `[${values.map((value) => JSON.stringify(value)).join(', ')}]`;
  if (kind === 'boolean' || kind === 'integer' || kind === 'number') return values[0];
  return JSON.stringify(values[0]);
}

function grouped(choices: Choices, mode: PlaygroundMode): [Parameter, string[]][] {
  return playgroundFields(mode).flatMap((parameter) => {
    const values = choices.filter(([name]) => name === parameter.name).map(([, value]) => value);
    return values.length > 0 ? [[parameter, values] as [Parameter, string[]]] : [];
  });
}

/** The same request in code: a curl line, `@shutterbus/client` and `screenshotone-api-sdk`. */
export function snippets(
  baseUrl: string,
  choices: Choices,
  accessKey: string,
  signedUrl: string,
  mode: PlaygroundMode = 'take',
): { curl: string; client: string; sdk: string } {
  const animate = mode === 'animate';
  const format = choices.find(([name]) => name === 'format')?.[1] ?? (animate ? 'mp4' : 'png');
  const entries = grouped(choices, mode);
  const params = entries.map(([parameter, values]) => `  ${parameter.name}: ${literal(parameter, values)},`).join('\n');
  const client = [
    "import { Shutterbus } from '@shutterbus/client';",
    '',
    `const client = new Shutterbus({ accessKey: ${JSON.stringify(accessKey)}, secretKey: process.env.SHUTTERBUS_SECRET_KEY, baseUrl: ${JSON.stringify(baseUrl)} });`,
    `const url = client.${animate ? 'signAnimateUrl' : 'signUrl'}({`,
    params,
    '});',
  ].join('\n');
  const camel = (name: string) => name.replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase());
  // ScreenshotOne's SDK has no setter for Shutterbus's own options: they are named in a comment.
  const own = entries.filter(([parameter]) => sdkLacks.has(parameter.name));
  const [first, ...rest] = entries.filter(([parameter]) => !sdkLacks.has(parameter.name));
  const options = animate ? 'AnimateOptions' : 'TakeOptions';
  const start =
    first && (first[0].name === 'url' || first[0].name === 'html')
      ? `${options}.${first[0].name}(${literal(first[0], first[1])})`
      : `${options}.url("https://example.com")`;
  const calls = (first && (first[0].name === 'url' || first[0].name === 'html') ? rest : [first, ...rest])
    .flatMap((entry) => (entry ? [entry] : []))
    .map(([parameter, values]) =>
      parameter.type.kind === 'list'
        ? `\n  .${camel(parameter.name)}(${values.map((value) => JSON.stringify(value)).join(', ')})`
        : `\n  .${camel(parameter.name)}(${literal(parameter, values)})`,
    );
  const sdk = [
    `import { Client, ${options} } from 'screenshotone-api-sdk';`,
    '',
    `const client = new Client(${JSON.stringify(accessKey)}, process.env.SHUTTERBUS_SECRET_KEY, ${JSON.stringify(`${baseUrl}/api`)});`,
    `const options = ${start}${calls.join('')};`,
    `const url = await client.${animate ? 'generateSignedAnimateURL' : 'generateSignedTakeURL'}(options);`,
    ...(own.length > 0
      ? [`// Not in ScreenshotOne's SDK (use the client above): ${own.map(([parameter]) => parameter.name).join(', ')}`]
      : []),
  ].join('\n');
  return { curl: `curl -L -o ${animate ? 'animation' : 'shot'}.${extensionOf(format)} '${signedUrl}'`, client, sdk };
}
