// The `shutterbus` operator CLI (contract §2): JSON on stdout, errors as JSON on stderr.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { connect } from '@nats-io/transport-node';
import { ConfigError, loadConfig, type Config } from '../config.ts';
import { errorTable, ServiceError } from '../errors.ts';
import { isNatsUnavailable } from '../jetstream/errors.ts';
import { ensureTopology, type Topology } from '../jetstream/topology.ts';
import { emailPattern } from '../accounts/accounts.ts';
import { signedExampleUrl } from '../signing.ts';
import { monthOf, QuotaLedger } from '../workspaces/usage.ts';
import { canManage, describeWorkspace, normalizeEmail, WorkspaceStore, type Role, type Workspace } from '../workspaces/workspace.ts';
import { choice, onlyFlags, optional, parseArgs, required, UsageError, type Parsed } from './args.ts';
import { mailCommands } from './mail.ts';
import { replayCommands } from './replay.ts';
import { webhookCommands } from './webhooks.ts';

const usage = `usage: shutterbus <command>
  workspace create [--plan free|pro] [--quota N] [--owner EMAIL]
  workspace show --workspace ID
  member add --workspace ID --email EMAIL --role owner|admin|member
  member verify --workspace ID --email EMAIL
  settings set --workspace ID --as EMAIL --require-signed-requests on|off
  keys rotate --workspace ID --as EMAIL
  usage --workspace ID [--month YYYY-MM]
  webhooks dead [--workspace ID]
  webhooks redrive --id DELIVERY_ID | --all [--workspace ID]
  replay renders|deliveries (--since ISO_TIME | --from-seq N) [--workspace ID] [--dry-run]
  mail outbox    (mail the dashboard wrote instead of sending, when SMTP_URL is unset)
  demo    (used by make run: the demo workspace, created on first run)`;

/** What every command gets. */
interface Context {
  config: Config;
  topology: Topology;
  workspaces: WorkspaceStore;
}

type Command = (parsed: Parsed, context: Context) => Promise<unknown>;

function email(parsed: Parsed, name: string): string {
  const value = required(parsed, name);
  if (!emailPattern.test(value)) throw new UsageError(`--${name} must be an email address`);
  return normalizeEmail(value);
}

async function workspaceOf(parsed: Parsed, context: Context): Promise<Workspace> {
  const id = required(parsed, 'workspace');
  const workspace = await context.workspaces.get(id);
  if (!workspace) throw new ServiceError('not_found', {}, { message: `No workspace ${id}.` });
  return workspace;
}

function memberOf(workspace: Workspace, address: string) {
  const member = workspace.members.find((m) => m.email === address);
  if (!member) throw new ServiceError('not_found', {}, { message: `${address} is not a member of ${workspace.workspace_id}.` });
  return member;
}

const commands: Record<string, Command> = {
  ...webhookCommands,
  ...replayCommands,
  ...mailCommands,
  'workspace create': async (parsed, { workspaces }) => {
    onlyFlags(parsed, ['plan', 'quota', 'owner']);
    const plan = choice(parsed, 'plan', ['free', 'pro'] as const, 'free');
    const quotaFlag = optional(parsed, 'quota');
    if (quotaFlag !== undefined && !/^\d{1,9}$/.test(quotaFlag)) throw new UsageError('--quota must be a whole number');
    const owner = parsed.flags.has('owner') ? email(parsed, 'owner') : undefined;
    return describeWorkspace(await workspaces.create({ plan, quota: quotaFlag === undefined ? undefined : Number(quotaFlag), owner }));
  },
  'workspace show': async (parsed, context) => {
    onlyFlags(parsed, ['workspace']);
    return describeWorkspace(await workspaceOf(parsed, context));
  },
  'member add': async (parsed, context) => {
    onlyFlags(parsed, ['workspace', 'email', 'role']);
    const { workspace_id } = await workspaceOf(parsed, context);
    const address = email(parsed, 'email');
    const role = choice(parsed, 'role', ['owner', 'admin', 'member'] as const) as Role;
    const workspace = await context.workspaces.update(workspace_id, (current) => {
      const existing = current.members.find((m) => m.email === address);
      const members = existing
        ? current.members.map((m) => (m.email === address ? { ...m, role } : m))
        : [...current.members, { email: address, role, verified: false }];
      return { ...current, members };
    });
    return memberOf(workspace, address);
  },
  'member verify': async (parsed, context) => {
    onlyFlags(parsed, ['workspace', 'email']);
    const { workspace_id } = await workspaceOf(parsed, context);
    const address = email(parsed, 'email');
    const workspace = await context.workspaces.update(workspace_id, (current) => {
      memberOf(current, address);
      return { ...current, members: current.members.map((m) => (m.email === address ? { ...m, verified: true } : m)) };
    });
    return memberOf(workspace, address);
  },
  'settings set': async (parsed, context) => {
    onlyFlags(parsed, ['workspace', 'as', 'require-signed-requests']);
    const { workspace_id } = await workspaceOf(parsed, context);
    const actor = email(parsed, 'as');
    const setting = choice(parsed, 'require-signed-requests', ['on', 'off'] as const);
    const workspace = await context.workspaces.update(workspace_id, (current) => {
      if (!canManage(current, actor)) throw new ServiceError('forbidden');
      return { ...current, require_signed_requests: setting === 'on' };
    });
    return describeWorkspace(workspace);
  },
  'keys rotate': async (parsed, context) => {
    onlyFlags(parsed, ['workspace', 'as']);
    const { workspace_id } = await workspaceOf(parsed, context);
    return describeWorkspace(await context.workspaces.rotateKeys(workspace_id, email(parsed, 'as')));
  },
  usage: async (parsed, context) => {
    onlyFlags(parsed, ['workspace', 'month']);
    const workspace = await workspaceOf(parsed, context);
    const month = optional(parsed, 'month') ?? monthOf(new Date());
    if (!/^\d{4}-(0[1-9]|1[0-2])$/.test(month)) throw new UsageError('--month must be YYYY-MM');
    const { used, inFlight } = await new QuotaLedger(context.topology.usage).month(workspace.workspace_id, month);
    return { workspace_id: workspace.workspace_id, month, used, in_flight: inFlight, quota: workspace.quota };
  },
  demo: async (parsed, context) => {
    onlyFlags(parsed, []);
    const file = path.join(context.config.dataDir, 'demo-workspace.json');
    const remembered = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as { workspace_id: string }) : null;
    let workspace = remembered ? await context.workspaces.get(remembered.workspace_id) : null;
    if (!workspace) {
      const owner = 'demo@shutterbus.local';
      const created = await context.workspaces.create({ plan: 'free', owner });
      workspace = await context.workspaces.update(created.workspace_id, (current) => ({
        ...current,
        members: current.members.map((m) => ({ ...m, verified: true })),
      }));
      mkdirSync(context.config.dataDir, { recursive: true });
      writeFileSync(file, JSON.stringify({ workspace_id: workspace.workspace_id }));
    }
    const signedUrl = signedExampleUrl(context.config.baseUrl, workspace.access_key, workspace.secret_key);
    return { ...describeWorkspace(workspace), signed_example_url: signedUrl, curl: `curl -o shot.png '${signedUrl}'` };
  },
};

function fail(code: string, message: string, exitCode: number): never {
  process.stderr.write(`${JSON.stringify({ error_code: code, error_message: message })}\n`);
  process.exit(exitCode);
}

async function main(argv: string[]): Promise<void> {
  const parsed = parseArgs(argv);
  const name = [parsed.words.slice(0, 2).join(' '), parsed.words[0]].find((candidate) => candidate && commands[candidate]);
  if (!name || parsed.words.length > name.split(' ').length) fail('usage', usage, 2);
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) fail('configuration_not_valid', err.message, 1);
    throw err;
  }
  let nc;
  try {
    nc = await connect({ servers: [...config.natsServers], name: 'shutterbus-cli', timeout: 5000 });
  } catch (err) {
    fail('temporary_unavailable', `NATS at ${config.natsServers.join(',')} did not answer: ${(err as Error).message}`, 1);
  }
  try {
    const topology = await ensureTopology(nc, config);
    const workspaces = new WorkspaceStore(topology.workspaces, topology.accessKeys);
    const result = await commands[name](parsed, { config, topology, workspaces });
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    await nc.drain();
  } catch (err) {
    await nc.close();
    if (err instanceof UsageError) fail('usage', `${err.message}\n${usage}`, 2);
    if (err instanceof ServiceError) fail(err.code, err.message, 1);
    if (isNatsUnavailable(err)) fail('temporary_unavailable', `JetStream did not answer (${(err as Error).message}); retry shortly`, 1);
    fail('internal_application_error', errorTable.internal_application_error.message + ` (${(err as Error).message})`, 1);
  }
}

await main(process.argv.slice(2));
