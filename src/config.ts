// The one reader of process.env: every setting, validated once at start and frozen.
import path from 'node:path';

/** Which parts of Shutterbus a process runs; each scales on its own. */
export type Role = 'ingress' | 'render' | 'delivery';

/** The validated, frozen configuration of one process. */
export interface Config {
  port: number;
  host: string;
  baseUrl: string;
  /** The NATS servers to connect to (a cluster's nodes); the client learns the rest from them. */
  natsServers: readonly string[];
  /** Replicas of every stream, consumer and KV bucket the service creates (raised in place, never lowered). */
  jetstreamReplicas: 1 | 3 | 5;
  s3: { endPoint: string; accessKey: string; secretKey: string; bucket: string; region: string };
  localNatsPort: number;
  localS3Port: number;
  dataDir: string;
  chromiumPath: string;
  /** CHROMIUM_NO_SANDBOX=true: Chromium without its sandbox (said loudly in the log); otherwise a start without the sandbox fails. */
  chromiumNoSandbox: boolean;
  /** The unprivileged user Chromium runs as when the service runs as root (docs/browser.md). */
  chromiumUser: string;
  /** The only environment variables Chromium is started with: locale, time zone, paths; never a credential. */
  browserEnv: Readonly<Record<string, string>>;
  /** Most memory one renderer may hold, in MB: its V8 heap limit and the watchdog's bound (docs/browser.md). */
  rendererMemoryMb: number;
  roles: ReadonlySet<Role>;
  allowPrivateTargets: boolean;
  webhookRetrySchedule: readonly number[];
  /** Renders one worker process runs at once. */
  renderConcurrency: number;
  /** Deliveries of one render request before it ends as failed. */
  renderMaxDeliver: number;
  /** Seconds JetStream waits for an ack (or an in-progress heartbeat) before redelivering. */
  renderAckWaitSeconds: number;
  /** Render requests that may wait in the stream before the ingress answers 503. */
  renderQueueLimit: number;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** Key of the dashboard's session cookies; unset: one is generated and shared through KV. */
  sessionSecret?: string;
  /** NODE_ENV=production: development conveniences (a generated SECRETS_KEY) are refused. */
  production: boolean;
  /** The key that seals secrets at rest; unset on a development machine: generated in DATA_DIR. */
  secretsKey?: string;
  /** Earlier SECRETS_KEY values, kept only to open what they sealed until it is sealed again. */
  secretsKeyPrevious: readonly string[];
  /** smtp:// or smtps:// server for the dashboard's mail; unset: mail goes to the log and the outbox. */
  smtpUrl?: string;
  /** Sender of the dashboard's mail. */
  mailFrom: string;
}

/** A bad environment variable: the message is the one line printed at start. */
export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name}: "${raw}" is not a whole number`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(`${name}: ${value} is outside ${min}–${max}`);
  return value;
}

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (['true', '1'].includes(raw)) return true;
  if (['false', '0'].includes(raw)) return false;
  throw new ConfigError(`${name}: "${raw}" is not true or false`);
}

function absoluteUrl(name: string, raw: string, schemes: string[]): string {
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(`${name}: "${raw}" is not an absolute URL`);
  }
  if (!schemes.includes(parsed.protocol)) {
    throw new ConfigError(`${name}: "${raw}" must use ${schemes.join(' or ')}`);
  }
  return raw.replace(/\/+$/, '');
}

const durationUnits: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600, d: 86400 };

/** Parses "10s,1m,5m" into seconds: [10, 60, 300]. */
export function parseDurations(name: string, raw: string): number[] {
  return raw.split(',').map((part) => {
    const match = /^\s*(\d+(?:\.\d+)?)(ms|s|m|h|d)\s*$/.exec(part);
    if (!match) throw new ConfigError(`${name}: "${part.trim()}" is not a duration like 10s, 5m or 2h`);
    return Number(match[1]) * durationUnits[match[2]];
  });
}

/** A comma-separated list of nats:// or tls:// addresses. */
function natsServers(raw: string): string[] {
  const servers = raw.split(',').map((part) => part.trim()).filter(Boolean);
  if (servers.length === 0) throw new ConfigError('NATS_URL: name at least one server');
  return servers.map((server) => absoluteUrl('NATS_URL', server, ['nats:', 'tls:']));
}

function replicas(env: Env): 1 | 3 | 5 {
  const value = integer(env, 'JETSTREAM_REPLICAS', 1, 1, 5);
  if (value !== 1 && value !== 3 && value !== 5) throw new ConfigError(`JETSTREAM_REPLICAS: ${value} is not 1, 3 or 5`);
  return value;
}

function secret(env: Env, name: string): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  if (raw.length < 32) throw new ConfigError(`${name}: use at least 32 characters`);
  return raw;
}

function previousSecrets(env: Env): string[] {
  const raw = env.SECRETS_KEY_PREVIOUS;
  if (raw === undefined || raw === '') return [];
  return raw.split(',').map((part, index) => {
    const value = part.trim();
    if (value.length < 32) throw new ConfigError(`SECRETS_KEY_PREVIOUS: key ${index + 1} is shorter than 32 characters`);
    return value;
  });
}

function roles(raw: string): Set<Role> {
  const known: Role[] = ['ingress', 'render', 'delivery'];
  const chosen = raw.split(',').map((r) => r.trim()).filter(Boolean);
  const unknown = chosen.filter((r) => !known.includes(r as Role));
  if (unknown.length > 0) throw new ConfigError(`ROLES: unknown role "${unknown[0]}" (known: ${known.join(', ')})`);
  if (chosen.length === 0) throw new ConfigError('ROLES: name at least one of ingress, render, delivery');
  return new Set(chosen as Role[]);
}

// What of the service's environment Chromium may see: how to find programs, fonts, the time zone
// and the locale. Its credentials (S3_*, SECRETS_KEY, ...) are never passed on.
const BROWSER_ENV_NAMES = ['PATH', 'HOME', 'TMPDIR', 'TZ', 'LANG', 'LANGUAGE', 'LC_ALL', 'FONTCONFIG_FILE', 'FONTCONFIG_PATH'];

function browserEnv(env: Env): Record<string, string> {
  const kept: Record<string, string> = { PATH: '/usr/local/bin:/usr/bin:/bin' };
  for (const name of BROWSER_ENV_NAMES) if (env[name]) kept[name] = env[name];
  return kept;
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/** Reads and validates the environment; throws ConfigError naming the first bad variable. */
export function loadConfig(env: Env = process.env): Config {
  const port = integer(env, 'PORT', 3000, 0, 65535);
  const host = env.HOST || '127.0.0.1';
  const localNatsPort = integer(env, 'LOCAL_NATS_PORT', 4222, 1, 65535);
  const localS3Port = integer(env, 'LOCAL_S3_PORT', 9000, 1, 65535);
  const logLevel = (env.LOG_LEVEL || 'info') as Config['logLevel'];
  if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL: "${logLevel}" is not one of fatal, error, warn, info, debug, trace, silent`);
  }
  const config: Config = {
    port,
    host,
    baseUrl: absoluteUrl('BASE_URL', env.BASE_URL || `http://127.0.0.1:${port}`, ['http:', 'https:']),
    natsServers: natsServers(env.NATS_URL || `nats://127.0.0.1:${localNatsPort}`),
    jetstreamReplicas: replicas(env),
    s3: {
      endPoint: absoluteUrl('S3_ENDPOINT', env.S3_ENDPOINT || `http://127.0.0.1:${localS3Port}`, ['http:', 'https:']),
      accessKey: env.S3_ACCESS_KEY || 'S3RVER',
      secretKey: env.S3_SECRET_KEY || 'S3RVER',
      bucket: env.S3_BUCKET || 'shutterbus',
      region: env.S3_REGION || 'us-east-1',
    },
    localNatsPort,
    localS3Port,
    dataDir: path.resolve(env.DATA_DIR || '.data'),
    chromiumPath: env.CHROMIUM_PATH || '/usr/lib/chromium/chromium',
    chromiumNoSandbox: boolean(env, 'CHROMIUM_NO_SANDBOX', false),
    chromiumUser: env.CHROMIUM_USER || 'shutterbus-chromium',
    browserEnv: browserEnv(env),
    rendererMemoryMb: integer(env, 'RENDERER_MEMORY_LIMIT_MB', 1024, 128, 16384),
    roles: roles(env.ROLES || 'ingress,render,delivery'),
    allowPrivateTargets: boolean(env, 'ALLOW_PRIVATE_TARGETS', false),
    webhookRetrySchedule: parseDurations('WEBHOOK_RETRY_SCHEDULE', env.WEBHOOK_RETRY_SCHEDULE || '10s,1m,5m,30m,2h,6h,12h,24h'),
    renderConcurrency: integer(env, 'RENDER_CONCURRENCY', 2, 1, 64),
    renderMaxDeliver: integer(env, 'RENDER_MAX_DELIVER', 3, 1, 20),
    renderAckWaitSeconds: integer(env, 'RENDER_ACK_WAIT', 30, 2, 600),
    renderQueueLimit: integer(env, 'RENDER_QUEUE_LIMIT', 200, 1, 100000),
    logLevel,
    sessionSecret: secret(env, 'SESSION_SECRET'),
    production: env.NODE_ENV === 'production',
    secretsKey: secret(env, 'SECRETS_KEY'),
    secretsKeyPrevious: previousSecrets(env),
    smtpUrl: env.SMTP_URL ? absoluteUrl('SMTP_URL', env.SMTP_URL, ['smtp:', 'smtps:']) : undefined,
    mailFrom: env.MAIL_FROM || 'Shutterbus <no-reply@shutterbus.local>',
  };
  return deepFreeze(config);
}
