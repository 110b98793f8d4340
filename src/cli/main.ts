// The `shutterbus` operator CLI (docs/operations.md): JSON on stdout, errors as one JSON line on
// stderr; --version, --help and a command that does not exist answer plain text.
import { ProfileStore } from '../profiles/store.ts';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { ConfigError, loadConfig, type Config } from '../config.ts';
import { errorTable, ServiceError } from '../errors.ts';
import { isNatsUnavailable } from '../jetstream/errors.ts';
import { retryWhile, withTimeout } from '../retry.ts';
import { ensureTopology, type Topology } from '../jetstream/topology.ts';
import { AccountStore, emailPattern } from '../accounts/accounts.ts';
import { Membership } from '../accounts/membership.ts';
import { signedExampleUrl } from '../signing.ts';
import { monthOf, QuotaLedger } from '../workspaces/usage.ts';
import { canManage, describeWorkspace, normalizeEmail, WorkspaceStore, type Role } from '../workspaces/workspace.ts';
import { asGiven, choice, command, parseFlags, required, UsageError, type Command } from './args.ts';
import { mailCommands } from './mail.ts';
import { monitorCommands } from './monitors.ts';
import { replayCommands } from './replay.ts';
import { storageCommands } from './storage.ts';
import { webhookCommands } from './webhooks.ts';
import { createSealer, sealingKeySource } from '../secrets/key.ts';
import { checkSealingKey, resealWitness } from '../secrets/key-check.ts';
import { resealSessionSecret, resolveSessionSecret } from '../http/dashboard/session.ts';
import { invitationMail } from '../http/dashboard/invitations.ts';
import { createMailer } from '../mail/mailer.ts';
import { Outbox } from '../mail/outbox.ts';
import type { Sealer } from '../secrets/sealer.ts';

/**
 * How long a run waits for JetStream to open its streams and buckets (and, for a command that only
 * reads, to answer it): long enough for the leader elections after a cluster node is lost (up to
 * ≈ 15 s on nats-server 2.9 here), short enough to report an outage.
 */
const JETSTREAM_PATIENCE_MS = 30_000;

const usage = `usage: shutterbus <command>
  workspace create [--plan free|pro] [--quota N] [--owner EMAIL]
  workspace show --workspace ID
  member add --workspace ID --email EMAIL --role owner|admin|member
  member verify --workspace ID --email EMAIL
  settings set --workspace ID --as EMAIL --require-signed-requests on|off
  keys rotate --workspace ID --as EMAIL
  storage set --workspace ID --as EMAIL --endpoint URL --bucket NAME --access-key-id ID --secret-access-key SECRET [--region REGION]
  storage show --workspace ID
  storage clear --workspace ID --as EMAIL
  usage --workspace ID [--month YYYY-MM]
  webhooks dead [--workspace ID]
  webhooks redrive --id DELIVERY_ID | --all [--workspace ID]
  replay renders|deliveries (--since ISO_TIME | --from-seq N) [--workspace ID] [--dry-run]
  secrets reseal    (after a SECRETS_KEY rotation: seal every stored secret under the current key)
  monitors list [--workspace ID]
  monitors remove --id MONITOR_ID
  mail outbox    (mail the dashboard wrote instead of sending, when SMTP_URL is unset)
  demo    (used by make run: the demo workspace, created on first run)
  --version | --help`;

/** What every command gets. */
interface Context {
  config: Config;
  topology: Topology;
  workspaces: WorkspaceStore;
  membership: Membership;
  sealer: Sealer;
}

function email(value: string | undefined, name: string): string {
  const address = required(value, name);
  if (!emailPattern.test(address)) throw new UsageError(`--${name} must be an email address`);
  return normalizeEmail(address);
}

/**
 * Mails `address` the link that claims its invitation to `workspaceId` (docs/security.md): the CLI
 * adds an address, only the mailbox's owner gets in. A mail server that fails is reported on
 * stderr; the operator's `member verify` claims it instead.
 */
async function mailInvitation(context: Context, address: string, workspaceId: string): Promise<void> {
  const { config, topology, sealer, membership } = context;
  const account = await membership.accounts.get(address);
  if (!account) return;
  const secret = await resolveSessionSecret(config.sessionSecret, topology.dashboard, sealer);
  const mailer = createMailer({
    smtpUrl: config.smtpUrl,
    from: config.mailFrom,
    outbox: new Outbox(topology.jsm, sealer),
    log: { info: () => {} },
  });
  await mailer.send(invitationMail(secret, config.baseUrl, account, workspaceId)).catch((err) => {
    process.stderr.write(
      `${JSON.stringify({ warning: `the invitation mail to ${address} was not sent: ${(err as Error).message}` })}\n`,
    );
  });
}

const workspaceFlag = { workspace: { type: 'string' } } as const;
const asFlag = { as: { type: 'string' } } as const;

const commands: Record<string, Command<Context>> = {
  ...webhookCommands,
  ...replayCommands,
  ...mailCommands,
  ...storageCommands,
  ...monitorCommands,
  'workspace create': command(
    { plan: { type: 'string', default: 'free' }, quota: { type: 'string' }, owner: { type: 'string' } },
    (flags) => {
      const plan = choice(flags.plan, 'plan', ['free', 'pro'] as const);
      if (flags.quota !== undefined && !/^\d{1,9}$/.test(flags.quota))
        throw new UsageError('--quota must be a whole number');
      return {
        plan,
        quota: flags.quota === undefined ? undefined : Number(flags.quota),
        owner: flags.owner === undefined ? undefined : email(flags.owner, 'owner'),
      };
    },
    async (input, context: Context) => {
      const workspace = await context.membership.createWorkspace(input);
      if (input.owner) await mailInvitation(context, input.owner, workspace.workspace_id);
      return describeWorkspace(workspace);
    },
  ),
  'workspace show': command(
    workspaceFlag,
    (flags) => required(flags.workspace, 'workspace'),
    async (workspaceId, context: Context) => describeWorkspace(await context.workspaces.require(workspaceId)),
    { readOnly: true },
  ),
  'member add': command(
    { ...workspaceFlag, email: { type: 'string' }, role: { type: 'string' } },
    (flags) => ({
      workspaceId: required(flags.workspace, 'workspace'),
      address: email(flags.email, 'email'),
      role: choice<Role>(flags.role, 'role', ['owner', 'admin', 'member']),
    }),
    async ({ workspaceId, address, role }, context: Context) => {
      const { workspace_id } = await context.workspaces.require(workspaceId);
      // The same service as the dashboard's: the address is invited, and mailed the link that claims it.
      const { member, added } = await context.membership.add(workspace_id, address, role, { operator: true });
      if (added) await mailInvitation(context, address, workspace_id);
      return member;
    },
  ),
  'member verify': command(
    { ...workspaceFlag, email: { type: 'string' } },
    (flags) => ({ workspaceId: required(flags.workspace, 'workspace'), address: email(flags.email, 'email') }),
    async ({ workspaceId, address }, context: Context) => {
      const { workspace_id } = await context.workspaces.require(workspaceId);
      return context.membership.verifyMember(workspace_id, address);
    },
  ),
  'settings set': command(
    { ...workspaceFlag, ...asFlag, 'require-signed-requests': { type: 'string' } },
    (flags) => ({
      workspaceId: required(flags.workspace, 'workspace'),
      actor: email(flags.as, 'as'),
      setting: choice(flags['require-signed-requests'], 'require-signed-requests', ['on', 'off'] as const),
    }),
    async ({ workspaceId, actor, setting }, context: Context) => {
      const { workspace_id } = await context.workspaces.require(workspaceId);
      const workspace = await context.workspaces.update(workspace_id, (current) => {
        if (!canManage(current, actor)) throw new ServiceError('forbidden');
        return { ...current, require_signed_requests: setting === 'on' };
      });
      return describeWorkspace(workspace);
    },
  ),
  'keys rotate': command(
    { ...workspaceFlag, ...asFlag },
    (flags) => ({ workspaceId: required(flags.workspace, 'workspace'), actor: email(flags.as, 'as') }),
    async ({ workspaceId, actor }, context: Context) => {
      const { workspace_id } = await context.workspaces.require(workspaceId);
      return describeWorkspace(await context.workspaces.rotateKeys(workspace_id, actor));
    },
  ),
  usage: command(
    { ...workspaceFlag, month: { type: 'string' } },
    (flags) => {
      const month = flags.month ?? monthOf(new Date());
      if (!/^\d{4}-(0[1-9]|1[0-2])$/.test(month)) throw new UsageError('--month must be YYYY-MM');
      return { workspaceId: required(flags.workspace, 'workspace'), month };
    },
    async ({ workspaceId, month }, context: Context) => {
      const workspace = await context.workspaces.require(workspaceId);
      const { used, inFlight } = await new QuotaLedger(context.topology.usage).month(workspace.workspace_id, month);
      return { workspace_id: workspace.workspace_id, month, used, in_flight: inFlight, quota: workspace.quota };
    },
    { readOnly: true },
  ),
  'secrets reseal': command({}, asGiven, async (_flags, context: Context) => ({
    workspaces: await context.workspaces.reseal(),
    session_secret: await resealSessionSecret(context.topology.dashboard, context.sealer),
    witness: await resealWitness(context.topology.dashboard, context.sealer),
    profiles: await new ProfileStore(context.topology.profiles, context.sealer).reseal(),
  })),
  demo: command({}, asGiven, async (_flags, context: Context) => {
    const file = path.join(context.config.dataDir, 'demo-workspace.json');
    const remembered = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as { workspace_id: string }) : null;
    let workspace = remembered ? await context.workspaces.get(remembered.workspace_id) : null;
    if (!workspace) {
      const owner = 'demo@shutterbus.local';
      const created = await context.membership.createWorkspace({ plan: 'free', owner });
      await context.membership.verifyMember(created.workspace_id, owner);
      workspace = (await context.workspaces.get(created.workspace_id))!;
      mkdirSync(context.config.dataDir, { recursive: true });
      writeFileSync(file, JSON.stringify({ workspace_id: workspace.workspace_id }));
    }
    const signedUrl = signedExampleUrl(context.config.baseUrl, workspace.access_key, workspace.secret_key);
    return { ...describeWorkspace(workspace), signed_example_url: signedUrl, curl: `curl -o shot.png '${signedUrl}'` };
  }),
};

/** A failure: one JSON line on stderr (docs/operations.md), whatever the message holds. */
function fail(code: string, message: string, exitCode: number): never {
  const oneLine = message.replace(/\s*\n\s*/g, ' ').trim();
  process.stderr.write(`${JSON.stringify({ error_code: code, error_message: oneLine })}\n`);
  process.exit(exitCode);
}

/** The project's version, from its package.json. */
function version(): string {
  return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string })
    .version;
}

/** The command named by the leading words of `argv` (two words, else one), and the arguments after them. */
function commandOf(argv: string[]): { name: string; rest: string[] } | null {
  const name = [argv.slice(0, 2).join(' '), argv[0]].find(
    (candidate) => candidate !== undefined && Object.hasOwn(commands, candidate),
  );
  return name === undefined ? null : { name, rest: argv.slice(name.split(' ').length) };
}

async function main(argv: string[]): Promise<void> {
  if (argv[0] === '--version' || argv[0] === '-v' || argv[0] === 'version') {
    process.stdout.write(`${version()}\n`);
    return;
  }
  // Help is an answer, not a mistake: plain text on stdout, exit 0.
  if (argv[0] === 'help' || argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`${usage}\n`);
    return;
  }
  const called = commandOf(argv);
  if (!called) {
    // Not a command at all: the list of commands, as text a person reads.
    const what = argv.length === 0 ? 'a command is needed' : `unknown command '${argv.slice(0, 2).join(' ')}'`;
    process.stderr.write(`shutterbus: ${what}\n\n${usage}\n`);
    process.exit(2);
  }
  const chosen = commands[called.name];
  // Every mistake in the command line is found here, before the configuration is read or NATS asked.
  let args: unknown;
  try {
    args = chosen.read(parseFlags(called.rest, chosen.flags));
  } catch (err) {
    if (err instanceof UsageError)
      fail('usage', `${called.name}: ${err.message} (shutterbus --help lists the commands and their flags)`, 2);
    throw err;
  }
  let config: Config;
  let sealer: Sealer;
  try {
    config = loadConfig();
    sealer = createSealer(config);
  } catch (err) {
    if (err instanceof ConfigError) fail('configuration_not_valid', err.message, 1);
    throw err;
  }
  let nc: NatsConnection;
  try {
    nc = await connect({ servers: [...config.natsServers], ...config.natsAuth, name: 'shutterbus-cli', timeout: 5000 });
  } catch (err) {
    fail(
      'temporary_unavailable',
      `NATS at ${config.natsServers.join(',')} did not answer: ${(err as Error).message}`,
      1,
    );
  }
  try {
    // Opening is idempotent: an attempt that found a stream without a leader (or hung) is made again.
    const until = Date.now() + JETSTREAM_PATIENCE_MS;
    const topology = await retryWhile(
      () => withTimeout(ensureTopology(nc, config), Math.max(1000, until - Date.now())),
      isNatsUnavailable,
      until,
    );
    // The service's key, or a refusal in one line: never a record sealed under a key the service lacks.
    const keySource = sealingKeySource(config);
    await retryWhile(() => checkSealingKey(topology, sealer, keySource), isNatsUnavailable, until);
    process.stderr.write(`${JSON.stringify({ sealing_key: sealer.keyId, from: keySource })}\n`);
    const workspaces = new WorkspaceStore(topology.workspaces, topology.accessKeys, sealer);
    const membership = new Membership(new AccountStore(topology.accounts), workspaces);
    const run = () => chosen.run(args, { config, topology, workspaces, membership, sealer });
    const result = chosen.readOnly ? await retryWhile(run, isNatsUnavailable, until) : await run();
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    await nc.drain();
  } catch (err) {
    await nc.close();
    if (err instanceof ServiceError) fail(err.code, err.message, 1);
    if (err instanceof ConfigError) fail('configuration_not_valid', err.message, 1);
    if (isNatsUnavailable(err))
      fail('temporary_unavailable', `JetStream did not answer (${(err as Error).message}); retry shortly`, 1);
    fail(
      'internal_application_error',
      `${errorTable.internal_application_error.message} (${(err as Error).message})`,
      1,
    );
  }
}

await main(process.argv.slice(2));
