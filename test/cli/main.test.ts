// The `shutterbus` CLI's command line (docs/operations.md): a mistake in it exits 2 with a usage error,
// before NATS is asked anything (these runs point NATS_URL at a closed port).
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { shutterbus as run } from '../helpers/cli.ts';

const cli = suite<{ natsUrl: string }>('shutterbus command line');

cli.before(async (context) => {
  const closed = net.createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  context.natsUrl = `nats://127.0.0.1:${(closed.address() as net.AddressInfo).port}`;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
});

// The CLI with NATS_URL at `natsUrl`; `error` is its failure JSON.
async function shutterbus(natsUrl: string, args: string[]) {
  const { code, stdout, stderr, json } = await run({ env: { NATS_URL: natsUrl } }, ...args);
  return {
    code,
    stdout,
    stderr,
    error: code === 0 ? undefined : (json as { error_code: string; error_message: string }),
  };
}

// Not a command at all: plain text naming what was given, then the commands.
const notCommands: [string, string[], RegExp][] = [
  ['no command', [], /^shutterbus: a command is needed\n/],
  ['an unknown command', ['nonsense'], /^shutterbus: unknown command 'nonsense'\n/],
  ['a name inherited by every object', ['constructor'], /^shutterbus: unknown command 'constructor'\n/],
  ['half a command', ['workspace'], /^shutterbus: unknown command 'workspace'\n/],
];

const mistakes: [string, string[], RegExp][] = [
  ['a word after the command', ['usage', 'extra', '--workspace', 'ws_0000000000000000'], /'extra'/],
  ['an unknown flag', ['workspace', 'create', '--bogus'], /--bogus/],
  [
    'a flag of another command',
    ['workspace', 'show', '--workspace', 'ws_0000000000000000', '--month', '2025-01'],
    /--month/,
  ],
  ['a short flag', ['workspace', 'create', '-p', 'pro'], /-p/],
  ['a flag without its value at the end', ['workspace', 'show', '--workspace'], /--workspace/],
  ['a flag whose value is the next flag', ['keys', 'rotate', '--workspace', '--as', 'a@example.com'], /--workspace/],
  ['a value given to a switch', ['replay', 'renders', '--from-seq', '1', '--dry-run=yes'], /--dry-run/],
  ['a value given to --all', ['webhooks', 'redrive', '--all=yes'], /--all/],
  ['a flag after "--"', ['mail', 'outbox', '--', '--x'], /--x/],
];

// A flag value only the command itself checks: still a usage error, found before NATS or the
// workspace is asked (an unknown workspace id would be not_found, NATS down temporary_unavailable).
const badValues: [string, string[], RegExp][] = [
  ['a required flag left out', ['workspace', 'show'], /--workspace is required/],
  ['an unknown plan', ['workspace', 'create', '--plan', 'gold'], /--plan must be one of free, pro/],
  ['a quota that is not a number', ['workspace', 'create', '--quota', 'lots'], /--quota must be a whole number/],
  ['a month that is not one', ['usage', '--workspace', 'ws_0000000000000000', '--month', '2025-13'], /--month/],
  [
    'an address that is not one',
    ['member', 'add', '--workspace', 'ws_0000000000000000', '--email', 'not-an-email', '--role', 'owner'],
    /--email must be an email address/,
  ],
  [
    'an unknown role',
    ['member', 'add', '--workspace', 'ws_0000000000000000', '--email', 'a@example.com', '--role', 'boss'],
    /--role must be one of/,
  ],
  [
    'a setting that is neither on nor off',
    [
      'settings',
      'set',
      '--workspace',
      'ws_0000000000000000',
      '--as',
      'a@example.com',
      '--require-signed-requests',
      'yes',
    ],
    /--require-signed-requests/,
  ],
  [
    'a storage endpoint that is not a URL',
    [
      'storage',
      'set',
      '--workspace',
      'ws_0000000000000000',
      '--as',
      'a@example.com',
      '--endpoint',
      'nowhere',
      '--bucket',
      'shots',
      '--access-key-id',
      'AKIA',
      '--secret-access-key',
      'secret',
    ],
    /--endpoint/,
  ],
  ['storage clear without --as', ['storage', 'clear', '--workspace', 'ws_0000000000000000'], /--as is required/],
  ['replay without a window', ['replay', 'renders'], /--since ISO_TIME or --from-seq N/],
  ['replay from a time that is not one', ['replay', 'deliveries', '--since', 'yesterday'], /--since must be/],
  ['redrive of nothing', ['webhooks', 'redrive'], /--id DELIVERY_ID or --all/],
  ['monitors remove without --id', ['monitors', 'remove'], /--id is required/],
];

// Each run of `cases` exits 2 with one JSON line, error_code "usage", saying what is wrong and where help is.
async function assertUsageErrors(natsUrl: string, cases: [string, string[], RegExp][]) {
  const runs = await Promise.all(cases.map(([, args]) => shutterbus(natsUrl, args)));
  cases.forEach(([what, , message], i) => {
    const { code, stdout, stderr, error } = runs[i];
    assert.is(code, 2, `${what}: exit code`);
    assert.is(stdout, '', `${what}: nothing on stdout`);
    assert.is(stderr.split('\n').filter(Boolean).length, 1, `${what}: one line`);
    assert.is(error?.error_code, 'usage', `${what}: error_code`);
    assert.match(error!.error_message, message, `${what}: says what is wrong`);
    assert.match(error!.error_message, /shutterbus --help/, `${what}: says where the usage is`);
  });
}

cli('no command or an unknown one prints the commands as plain text on stderr and exits 2', async ({ natsUrl }) => {
  const runs = await Promise.all(notCommands.map(([, args]) => shutterbus(natsUrl, args)));
  notCommands.forEach(([what, , message], i) => {
    const { code, stdout, stderr } = runs[i];
    assert.is(code, 2, `${what}: exit code`);
    assert.is(stdout, '', `${what}: nothing on stdout`);
    assert.match(stderr, message, `${what}: says what was given`);
    assert.match(
      stderr,
      /\nusage: shutterbus <command>\n {2}workspace create \[--plan free\|pro\]/,
      `${what}: plain text`,
    );
    assert.not.match(stderr, /\\n|"error_code"/, `${what}: not JSON`);
  });
});

cli('--version, -v and version print the version and exit 0, without asking NATS', async ({ natsUrl }) => {
  const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
  for (const args of [['--version'], ['-v'], ['version']]) {
    const { code, stdout, stderr } = await shutterbus(natsUrl, args);
    assert.is(code, 0, args.join(' '));
    assert.is(stdout, `${version}\n`, args.join(' '));
    assert.is(stderr, '', `${args.join(' ')}: nothing on stderr`);
  }
});

cli(
  'each mistake in the command line exits 2 with error_code "usage" and the usage text, without asking NATS',
  async ({ natsUrl }) => assertUsageErrors(natsUrl, mistakes),
);

cli('a flag value a command checks exits 2 with error_code "usage" too, without asking NATS', async ({ natsUrl }) =>
  assertUsageErrors(natsUrl, badValues),
);

cli(
  '--help, -h and help print the usage as plain text on stdout and exit 0, without asking NATS',
  async ({ natsUrl }) => {
    for (const args of [['--help'], ['-h'], ['help'], ['workspace', 'create', '--help']]) {
      const { code, stdout, stderr } = await shutterbus(natsUrl, args);
      assert.is(code, 0, args.join(' '));
      assert.is(stderr, '', `${args.join(' ')}: nothing on stderr`);
      assert.match(
        stdout,
        /^usage: shutterbus <command>\n {2}workspace create \[--plan free\|pro\]/,
        `${args.join(' ')}: plain text`,
      );
    }
  },
);

cli('a well-formed command line gets as far as NATS (exit 1, temporary_unavailable)', async ({ natsUrl }) => {
  const wellFormed = [
    ['workspace', 'create', '--plan', 'pro', '--quota=7', '--owner', 'boss@example.com'],
    ['workspace', 'show', '--workspace', 'ws_0000000000000000'],
    ['usage', '--workspace', 'ws_0000000000000000', '--month', '2025-01'],
    ['member', 'add', '--workspace', 'ws_0000000000000000', '--email', 'A@Example.com', '--role', 'owner'],
    ['webhooks', 'redrive', '--all', '--workspace', 'ws_0000000000000000'],
    ['replay', 'deliveries', '--from-seq', '1', '--dry-run'],
    ['replay', 'renders', '--since', '2025-01-31T12:00:00Z', '--workspace', 'ws_0000000000000000'],
    ['monitors', 'remove', '--id', 'mon_1'],
    ['mail', 'outbox'],
  ];
  const runs = await Promise.all(wellFormed.map((args) => shutterbus(natsUrl, args)));
  runs.forEach(({ code, error }, i) => {
    assert.is(error?.error_code, 'temporary_unavailable', wellFormed[i].join(' '));
    assert.is(code, 1, wellFormed[i].join(' '));
  });
});

cli.run();
