#!/usr/bin/env node
// shutterbus-client: render, follow and sign from a shell (docs/api.md, "The client package").
// Keys from SHUTTERBUS_ACCESS_KEY, SHUTTERBUS_SECRET_KEY and SHUTTERBUS_URL, or flags; every
// failure is one line on stderr and a non-zero exit (2 for a mistake in the command line).
import { readFileSync, writeFileSync } from 'node:fs';
import { Shutterbus } from './client.ts';
import { errorOfAnswer, ShutterbusError } from './errors.ts';
import { takeUrl } from './signing.ts';

const usage = `usage: shutterbus-client <command> [flags]
  take <url> -o FILE [--name value ...]      render; any /api/take option as --name value (a list: repeat it)
  animate <url> -o FILE [--name value ...]   record the page (format mp4 unless --format says otherwise)
  status <render_id>                          an asynchronous render's state, as JSON
  sign <url> [--animate] [--name value ...]   print a GET URL, signed when a secret key is given
flags: --access-key KEY (or SHUTTERBUS_ACCESS_KEY), --secret-key KEY (or SHUTTERBUS_SECRET_KEY),
       --base-url URL (or SHUTTERBUS_URL), -o FILE (- for stdout), -h/--help, -v/--version`;

/** A mistake in the command line: exit 2. */
class UsageError extends Error {}

/** The command line read: the command, its one positional argument, its own flags and the options. */
interface CommandLine {
  command: string;
  target?: string;
  flags: Map<string, string>;
  options: [string, string][];
}

const ownFlags = new Set(['access_key', 'secret_key', 'base_url', 'output', 'animate']);
const switches = new Set(['animate']);

function read(argv: string[]): CommandLine {
  const [command, ...rest] = argv;
  const flags = new Map<string, string>();
  const options: [string, string][] = [];
  let target: string | undefined;
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i];
    if (arg === '-o') {
      if (rest[i + 1] === undefined) throw new UsageError('-o needs a file name');
      flags.set('output', rest[++i]);
      continue;
    }
    if (!arg.startsWith('--')) {
      if (target !== undefined) throw new UsageError(`unexpected argument '${arg}'`);
      target = arg;
      continue;
    }
    const equals = arg.indexOf('=');
    const name = (equals === -1 ? arg.slice(2) : arg.slice(2, equals)).replaceAll('-', '_');
    if (name === '') throw new UsageError(`'${arg}' names nothing`);
    let value: string;
    if (equals !== -1) value = arg.slice(equals + 1);
    else if (switches.has(name) || rest[i + 1] === undefined || rest[i + 1].startsWith('--')) value = 'true';
    else value = rest[++i];
    if (ownFlags.has(name)) flags.set(name, value);
    else options.push([name, value]);
  }
  return { command, target, flags, options };
}

function version(): string {
  for (const candidate of ['./package.json', '../../package.json']) {
    try {
      return (JSON.parse(readFileSync(new URL(candidate, import.meta.url), 'utf8')) as { version: string }).version;
    } catch {
      // Not beside this file: the package's own, or the checkout's when run from the sources.
    }
  }
  return 'unknown';
}

function keys(line: CommandLine) {
  const accessKey = line.flags.get('access_key') ?? process.env.SHUTTERBUS_ACCESS_KEY;
  const secretKey = line.flags.get('secret_key') ?? process.env.SHUTTERBUS_SECRET_KEY;
  const baseUrl = line.flags.get('base_url') ?? process.env.SHUTTERBUS_URL;
  if (!accessKey) throw new UsageError('no access key: set SHUTTERBUS_ACCESS_KEY or pass --access-key');
  if (!baseUrl) throw new UsageError('no service address: set SHUTTERBUS_URL or pass --base-url');
  if (!/^https?:\/\//.test(baseUrl))
    throw new UsageError(`the service address must be an http(s) URL, not '${baseUrl}'`);
  return { accessKey, secretKey: secretKey || undefined, baseUrl: baseUrl.replace(/\/+$/, '').replace(/\/api$/, '') };
}

/** The URL of a GET render: `url` first, then each option in the order given. */
function urlOf(line: CommandLine, endpoint: '/api/take' | '/api/animate'): string {
  if (line.target === undefined) throw new UsageError(`${line.command} needs the page's URL`);
  const { accessKey, secretKey, baseUrl } = keys(line);
  const options: Record<string, string | string[]> = { url: line.target };
  for (const [name, value] of line.options) {
    const given = options[name];
    options[name] = given === undefined ? value : [...(Array.isArray(given) ? given : [given]), value];
  }
  return takeUrl(baseUrl, endpoint, options, accessKey, secretKey);
}

async function render(line: CommandLine, endpoint: '/api/take' | '/api/animate'): Promise<void> {
  const output = line.flags.get('output');
  if (output === undefined) throw new UsageError(`${line.command} needs -o FILE (or -o - for stdout)`);
  const url = urlOf(line, endpoint);
  let answer: Response;
  try {
    answer = await fetch(url);
  } catch (err) {
    const cause = (err as Error & { cause?: Error }).cause?.message ?? (err as Error).message;
    throw new ShutterbusError({ errorCode: 'network_error', message: `${new URL(url).origin}: ${cause}`, status: 0 });
  }
  if (!answer.ok) throw errorOfAnswer(answer.status, await answer.text(), answer.headers.get('x-render-id'));
  const bytes = new Uint8Array(await answer.arrayBuffer());
  if (output === '-') {
    process.stdout.write(bytes);
    return;
  }
  writeFileSync(output, bytes);
  const renderId = answer.headers.get('x-render-id');
  process.stdout.write(
    `${output}: ${bytes.byteLength} bytes, ${answer.headers.get('content-type') ?? 'no content type'}${renderId ? `, render ${renderId}` : ''}\n`,
  );
}

async function main(argv: string[]): Promise<void> {
  if (argv.includes('--version') || argv.includes('-v')) {
    process.stdout.write(`${version()}\n`);
    return;
  }
  if (argv.length === 0 || argv.includes('--help') || argv.includes('-h') || argv[0] === 'help') {
    process.stdout.write(`${usage}\n`);
    return;
  }
  const line = read(argv);
  switch (line.command) {
    case 'take':
      return render(line, '/api/take');
    case 'animate':
      return render(line, '/api/animate');
    case 'sign': {
      const animate = line.flags.get('animate') === 'true';
      process.stdout.write(`${urlOf(line, animate ? '/api/animate' : '/api/take')}\n`);
      return;
    }
    case 'status': {
      if (line.target === undefined) throw new UsageError('status needs a render id');
      if (line.options.length > 0) throw new UsageError(`status takes no option --${line.options[0][0]}`);
      const status = await new Shutterbus(keys(line)).status(line.target);
      process.stdout.write(`${JSON.stringify(status, null, 2)}\n`);
      return;
    }
    default:
      throw new UsageError(`unknown command '${line.command}'`);
  }
}

/** One line, whatever the message holds. */
const oneLine = (text: string) => text.replace(/\s*\n\s*/g, ' ').trim();

function describe(err: ShutterbusError): string {
  const details = Array.isArray(err.errorDetails)
    ? err.errorDetails
        .map((detail: { parameter?: string; message?: string }) =>
          [detail.parameter, detail.message].filter(Boolean).join(' '),
        )
        .join('; ')
    : typeof err.errorDetails === 'string'
      ? err.errorDetails
      : '';
  const status = err.status === 0 ? '' : ` (${err.status})`;
  return `${err.errorCode}${status}: ${err.message}${details ? ` ${details}` : ''}${err.renderId ? ` [render ${err.renderId}]` : ''}`;
}

try {
  await main(process.argv.slice(2));
} catch (err) {
  if (err instanceof UsageError) {
    process.stderr.write(`shutterbus-client: ${oneLine(err.message)} (shutterbus-client --help lists the commands)\n`);
    process.exit(2);
  }
  const message = err instanceof ShutterbusError ? describe(err) : (err as Error).message;
  process.stderr.write(`shutterbus-client: ${oneLine(message)}\n`);
  process.exit(1);
}
