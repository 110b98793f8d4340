// The one reader of process.env: every setting, validated once at start and frozen.
import { accessSync, constants, statSync } from 'node:fs';
import { isIP } from 'node:net';
import path from 'node:path';
import { defaultRenderBrowsers, defaultRenderConcurrency, defaultRenderMemoryBudgetMb } from './machine.ts';
import type { SettingName } from './settings.ts';

/** Which parts of Shutterbus a process runs; each scales on its own. */
export type Role = 'ingress' | 'render' | 'delivery';

/** The validated, frozen configuration of one process. */
export interface Config {
  port: number;
  host: string;
  baseUrl: string;
  /** Where stored files are served from (file URLs, cached redirects): best a cookie-less origin of its own (docs/security.md). */
  filesBaseUrl: string;
  /** Which proxy hops' X-Forwarded-For and X-Forwarded-Proto are believed, in Fastify's trustProxy terms (docs/security.md). */
  trustProxy: TrustProxy;
  /** The NATS servers to connect to (a cluster's nodes); the client learns the rest from them. */
  natsServers: readonly string[];
  /** NATS_USER / NATS_PASSWORD: this role's account on a NATS that requires authentication. */
  natsAuth?: { user: string; pass: string };
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
  /** Memory (MB, PSS) one worker's Chromium may hold with warm pages before idle ones are closed (docs/performance.md). */
  renderMemoryBudgetMb: number;
  /** Chromium browsers one worker process renders on (docs/performance.md, "Browsers per worker"). */
  renderBrowsers: number;
  /** Deliveries of one render request before it ends as failed. */
  renderMaxDeliver: number;
  /** Seconds JetStream waits for an ack (or an in-progress heartbeat) before redelivering. */
  renderAckWaitSeconds: number;
  /** Render requests that may wait in the stream before the ingress answers 503. */
  renderQueueLimit: number;
  /** The shortest monitor interval in seconds, on every plan (docs/monitors.md). */
  monitorMinInterval: number;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** Key of the dashboard's session cookies; unset: one is generated and shared through KV. */
  sessionSecret?: string;
  /** NODE_ENV=production: development conveniences (a generated SECRETS_KEY) are refused. */
  production: boolean;
  /** The key that seals secrets at rest; unset on a development machine: generated in DATA_DIR. */
  secretsKey?: string;
  /** OTEL_EXPORTER_OTLP_ENDPOINT: where traces go (OTLP over HTTP); unset, nothing is traced. */
  otlpEndpoint?: string;
  /** Earlier SECRETS_KEY values, kept only to open what they sealed until it is sealed again. */
  secretsKeyPrevious: readonly string[];
  /** smtp:// or smtps:// server for the dashboard's mail; unset: mail goes to the (sealed) outbox stream. */
  smtpUrl?: string;
  /** Sender of the dashboard's mail. */
  mailFrom: string;
  /** The operator's proxy per country (ip_country_code): lower-case code → http(s)://[user:pass@]host:port. */
  geoProxies: Readonly<Record<string, string>>;
  /** The OpenAI-compatible chat completions endpoint vision_prompt asks. */
  visionApiUrl: string;
  /** The model vision requests name (VISION_MODEL). */
  visionModel: string;
}

/**
 * TRUST_PROXY as Fastify takes it: false (the socket's peer is the client), true (every hop), or
 * the addresses and CIDR ranges of the proxies whose forwarded headers count.
 */
export type TrustProxy = boolean | readonly string[];

/** A bad environment variable: the message is the one line printed at start. */
export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;
/** The environment as the loader may read it: the variables of the settings table (src/settings.ts), no other. */
type Settings = Readonly<Partial<Record<SettingName, string>>>;

function integer(env: Settings, name: SettingName, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name}: "${raw}" is not a whole number`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(`${name}: ${value} is outside ${min}–${max}`);
  return value;
}

function boolean(env: Settings, name: SettingName, fallback: boolean): boolean {
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
  const servers = raw
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean);
  if (servers.length === 0) throw new ConfigError('NATS_URL: name at least one server');
  return servers.map((server) => absoluteUrl('NATS_URL', server, ['nats:', 'tls:']));
}

function natsAuth(env: Settings): Config['natsAuth'] {
  const user = env.NATS_USER || undefined;
  const pass = env.NATS_PASSWORD || undefined;
  if (!user && !pass) return undefined;
  if (!user || !pass)
    throw new ConfigError(`${user ? 'NATS_PASSWORD' : 'NATS_USER'}: set both NATS_USER and NATS_PASSWORD, or neither`);
  return { user, pass };
}

function replicas(env: Settings): 1 | 3 | 5 {
  const value = integer(env, 'JETSTREAM_REPLICAS', 1, 1, 5);
  if (value !== 1 && value !== 3 && value !== 5) throw new ConfigError(`JETSTREAM_REPLICAS: ${value} is not 1, 3 or 5`);
  return value;
}

function secret(env: Settings, name: SettingName): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  if (raw.length < 32) throw new ConfigError(`${name}: use at least 32 characters`);
  return raw;
}

function previousSecrets(env: Settings): string[] {
  const raw = env.SECRETS_KEY_PREVIOUS;
  if (raw === undefined || raw === '') return [];
  return raw.split(',').map((part, index) => {
    const value = part.trim();
    if (value.length < 32)
      throw new ConfigError(`SECRETS_KEY_PREVIOUS: key ${index + 1} is shorter than 32 characters`);
    return value;
  });
}

/** TRUST_PROXY: false, true, or a comma-separated list of proxy addresses, CIDR ranges and proxy-addr's named ranges. */
function trustProxy(raw: string | undefined): TrustProxy {
  if (raw === undefined || raw === '' || raw === 'false') return false;
  if (raw === 'true') return true;
  if (/^\d+$/.test(raw)) {
    // Fastify believes no forwarded header for a bare hop count: it cannot tell a proxy from a client sending the header.
    throw new ConfigError(
      `TRUST_PROXY: a hop count (${raw}) cannot tell a proxy from a client; name the proxies' addresses or CIDR ranges`,
    );
  }
  const proxies = raw
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean);
  if (proxies.length === 0) throw new ConfigError('TRUST_PROXY: name at least one proxy address');
  for (const proxy of proxies) {
    if (['loopback', 'linklocal', 'uniquelocal'].includes(proxy)) continue;
    const [address, bits, extra] = proxy.split('/');
    const family = isIP(address);
    const badBits = bits !== undefined && (!/^\d+$/.test(bits) || Number(bits) > (family === 4 ? 32 : 128));
    if (family === 0 || badBits || extra !== undefined) {
      throw new ConfigError(
        `TRUST_PROXY: "${proxy}" is not true, false, an IP address, a CIDR range, loopback, linklocal or uniquelocal`,
      );
    }
  }
  return proxies;
}

/** HOST: an IP address or a host name, not a URL or a list. */
function hostName(raw: string): string {
  const label = '[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?';
  if (isIP(raw) !== 0 || new RegExp(`^${label}(?:\\.${label})*$`).test(raw)) return raw;
  throw new ConfigError(`HOST: "${raw}" is not an IP address or a host name`);
}

/** CHROMIUM_PATH when unset: Debian's Chromium, the binary itself (not the /usr/bin/chromium wrapper, which adds flags). */
export const DEFAULT_CHROMIUM_PATH = '/usr/lib/chromium/chromium';

/**
 * CHROMIUM_PATH must name an executable file; checked where a render worker starts (the ingress
 * and delivery roles never launch it), before the launch, so the operator reads what is wrong.
 */
export function checkChromiumPath(chromiumPath: string): void {
  let isFile: boolean;
  try {
    isFile = statSync(chromiumPath).isFile();
  } catch {
    throw new ConfigError(`CHROMIUM_PATH: "${chromiumPath}" does not exist`);
  }
  try {
    if (!isFile) throw new Error('not a file');
    accessSync(chromiumPath, constants.X_OK);
  } catch {
    throw new ConfigError(`CHROMIUM_PATH: "${chromiumPath}" is not an executable file`);
  }
}

function roles(raw: string): Set<Role> {
  const known: Role[] = ['ingress', 'render', 'delivery'];
  const chosen = raw
    .split(',')
    .map((r) => r.trim())
    .filter(Boolean);
  const unknown = chosen.filter((r) => !known.includes(r as Role));
  if (unknown.length > 0) throw new ConfigError(`ROLES: unknown role "${unknown[0]}" (known: ${known.join(', ')})`);
  if (chosen.length === 0) throw new ConfigError('ROLES: name at least one of ingress, render, delivery');
  return new Set(chosen as Role[]);
}

// What of the service's environment Chromium may see: how to find programs, fonts, the time zone
// and the locale. Its credentials (S3_*, SECRETS_KEY, ...) are never passed on.
const BROWSER_ENV_NAMES = [
  'PATH',
  'HOME',
  'TMPDIR',
  'TZ',
  'LANG',
  'LANGUAGE',
  'LC_ALL',
  'FONTCONFIG_FILE',
  'FONTCONFIG_PATH',
];

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

/** GEO_PROXIES: `de=http://user:pass@host:port,us=http://…`; a code is two letters. */
export function parseGeoProxies(raw: string): Record<string, string> {
  const proxies: Record<string, string> = {};
  for (const part of raw
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean)) {
    const match = /^([a-zA-Z]{2})=(.+)$/.exec(part);
    if (!match)
      throw new ConfigError(`GEO_PROXIES: "${part.replace(/\/\/[^@/]*@/, '//…@')}" is not code=http://host:port`);
    let url: URL;
    try {
      url = new URL(match[2]);
    } catch {
      throw new ConfigError(`GEO_PROXIES: the proxy of ${match[1]} is not an absolute URL`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new ConfigError(`GEO_PROXIES: the proxy of ${match[1]} must use http: or https:`);
    proxies[match[1].toLowerCase()] = match[2];
  }
  return proxies;
}

/** Reads and validates the environment; throws ConfigError naming the first bad variable. */
export function loadConfig(raw: Env = process.env): Config {
  const env: Settings = raw;
  const port = integer(env, 'PORT', 3000, 0, 65535);
  const host = env.HOST ? hostName(env.HOST) : '127.0.0.1';
  const localNatsPort = integer(env, 'LOCAL_NATS_PORT', 4222, 1, 65535);
  const localS3Port = integer(env, 'LOCAL_S3_PORT', 9000, 1, 65535);
  const logLevel = (env.LOG_LEVEL || 'info') as Config['logLevel'];
  if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL: "${logLevel}" is not one of fatal, error, warn, info, debug, trace, silent`);
  }
  const renderMemoryBudgetMb = integer(env, 'RENDER_MEMORY_BUDGET', defaultRenderMemoryBudgetMb(), 128, 16_777_216);
  const baseUrl = absoluteUrl('BASE_URL', env.BASE_URL || `http://127.0.0.1:${port}`, ['http:', 'https:']);
  const config: Config = {
    port,
    host,
    baseUrl,
    filesBaseUrl: env.FILES_BASE_URL ? absoluteUrl('FILES_BASE_URL', env.FILES_BASE_URL, ['http:', 'https:']) : baseUrl,
    trustProxy: trustProxy(env.TRUST_PROXY),
    natsServers: natsServers(env.NATS_URL || `nats://127.0.0.1:${localNatsPort}`),
    jetstreamReplicas: replicas(env),
    natsAuth: natsAuth(env),
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
    chromiumPath: env.CHROMIUM_PATH || DEFAULT_CHROMIUM_PATH,
    chromiumNoSandbox: boolean(env, 'CHROMIUM_NO_SANDBOX', false),
    chromiumUser: env.CHROMIUM_USER || 'shutterbus-chromium',
    browserEnv: browserEnv(raw),
    rendererMemoryMb: integer(env, 'RENDERER_MEMORY_LIMIT_MB', 1024, 128, 16384),
    roles: roles(env.ROLES || 'ingress,render,delivery'),
    allowPrivateTargets: boolean(env, 'ALLOW_PRIVATE_TARGETS', false),
    webhookRetrySchedule: parseDurations(
      'WEBHOOK_RETRY_SCHEDULE',
      env.WEBHOOK_RETRY_SCHEDULE || '10s,1m,5m,30m,2h,6h,12h,24h',
    ),
    renderConcurrency: integer(env, 'RENDER_CONCURRENCY', defaultRenderConcurrency(), 1, 64),
    renderMemoryBudgetMb,
    renderBrowsers: integer(env, 'RENDER_BROWSERS', defaultRenderBrowsers(renderMemoryBudgetMb), 1, 16),
    renderMaxDeliver: integer(env, 'RENDER_MAX_DELIVER', 3, 1, 20),
    renderAckWaitSeconds: integer(env, 'RENDER_ACK_WAIT', 30, 2, 600),
    renderQueueLimit: integer(env, 'RENDER_QUEUE_LIMIT', 200, 1, 100000),
    monitorMinInterval: integer(env, 'MONITOR_MIN_INTERVAL', 60, 1, 86400),
    logLevel,
    sessionSecret: secret(env, 'SESSION_SECRET'),
    production: env.NODE_ENV === 'production',
    secretsKey: secret(env, 'SECRETS_KEY'),
    secretsKeyPrevious: previousSecrets(env),
    otlpEndpoint: env.OTEL_EXPORTER_OTLP_ENDPOINT
      ? absoluteUrl('OTEL_EXPORTER_OTLP_ENDPOINT', env.OTEL_EXPORTER_OTLP_ENDPOINT, ['http:', 'https:'])
      : undefined,
    smtpUrl: env.SMTP_URL ? absoluteUrl('SMTP_URL', env.SMTP_URL, ['smtp:', 'smtps:']) : undefined,
    mailFrom: env.MAIL_FROM || 'Shutterbus <no-reply@shutterbus.local>',
    geoProxies: parseGeoProxies(env.GEO_PROXIES || ''),
    visionApiUrl: absoluteUrl('VISION_API_URL', env.VISION_API_URL || 'https://api.openai.com/v1/chat/completions', [
      'http:',
      'https:',
    ]),
    visionModel: env.VISION_MODEL || 'gpt-4o',
  };
  return deepFreeze(config);
}
