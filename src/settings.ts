// Every environment variable the service reads, in one table: the loader (src/config.ts) reads
// only names listed here (its reads are typed by them), and the README's configuration table (what
// a newcomer sets) and docs/operations.md's (what an operator tunes) are made from it;
// test/config.test.ts fails when either page and the table disagree.

/** One row of a settings table: the variables it covers, its default and meaning as the docs show them. */
export interface Setting {
  names: readonly string[];
  /** As the docs show it (Markdown). */
  default: string;
  /** As the docs show it (Markdown, links relative to the repository's root). */
  meaning: string;
  /** Who sets it: a newcomer (the README's table) or an operator tuning a deployment (docs/operations.md). */
  audience: 'newcomer' | 'operator';
  /** Read by Node or glibc themselves, set for them by `make run` and the image; the loader never reads it. */
  readBy?: 'node';
}

export const settings = [
  {
    names: ['PORT'],
    default: '`3000`',
    meaning: 'HTTP port',
    audience: 'newcomer',
  },
  {
    names: ['HOST'],
    default: '`127.0.0.1`',
    meaning: 'listen address',
    audience: 'newcomer',
  },
  {
    names: ['BASE_URL'],
    default: '`http://127.0.0.1:$PORT`',
    meaning: 'public address used in redirects, file URLs and webhook payloads',
    audience: 'newcomer',
  },
  {
    names: ['NATS_URL'],
    default: '`nats://127.0.0.1:$LOCAL_NATS_PORT`',
    meaning:
      "NATS with JetStream; a comma-separated list of a cluster's servers (`nats://n1:4222,nats://n2:4222,nats://n3:4222`)",
    audience: 'newcomer',
  },
  {
    names: ['JETSTREAM_REPLICAS'],
    default: '`1`',
    meaning:
      'replicas (1, 3 or 5) of every stream, consumer and KV bucket; 3 on a 3-node cluster. Existing ones with fewer are raised in place at start; a start with fewer never lowers them',
    audience: 'operator',
  },
  {
    names: ['S3_ENDPOINT'],
    default: '`http://127.0.0.1:$LOCAL_S3_PORT`',
    meaning: 'S3-compatible object store (SeaweedFS, MinIO, AWS S3 or R2 in production)',
    audience: 'newcomer',
  },
  {
    names: ['S3_ACCESS_KEY', 'S3_SECRET_KEY'],
    default: '`S3RVER`',
    meaning: 'object store credentials',
    audience: 'newcomer',
  },
  {
    names: ['S3_BUCKET'],
    default: '`shutterbus`',
    meaning: 'bucket for rendered files (created at start)',
    audience: 'newcomer',
  },
  {
    names: ['S3_REGION'],
    default: '`us-east-1`',
    meaning: 'region (also spares the client a discovery call)',
    audience: 'newcomer',
  },
  {
    names: ['LOCAL_NATS_PORT', 'LOCAL_S3_PORT'],
    default: '`4222`, `9000`',
    meaning: 'where `make run` starts its local NATS and S3 store when `NATS_URL` / `S3_ENDPOINT` are unset',
    audience: 'operator',
  },
  {
    names: ['DATA_DIR'],
    default: '`.data`',
    meaning: 'state of the local NATS and S3 store, and logs',
    audience: 'newcomer',
  },
  {
    names: ['CHROMIUM_PATH'],
    default: '`/usr/lib/chromium/chromium`',
    meaning:
      "the browser binary (Debian's Chromium itself, not the `/usr/bin/chromium` wrapper); `make run`, `make test`, `make bench` and the image set Debian's headless shell, `/usr/lib/chromium/chromium-headless-shell` ([browser.md](docs/browser.md))",
    audience: 'newcomer',
  },
  {
    names: ['CHROMIUM_NO_SANDBOX'],
    default: '`false`',
    meaning:
      '`true` only where the runtime cannot give Chromium its sandbox; every launch then says so loudly ([browser.md](docs/browser.md))',
    audience: 'newcomer',
  },
  {
    names: ['CHROMIUM_USER'],
    default: '`shutterbus-chromium`',
    meaning: 'the unprivileged user Chromium runs as when the service runs as root (`make` creates it)',
    audience: 'operator',
  },
  {
    names: ['RENDERER_MEMORY_LIMIT_MB'],
    default: '`1024`',
    meaning: 'most memory one renderer may hold; a page past it ends its render with `422 page_memory_exceeded`',
    audience: 'operator',
  },
  {
    names: ['ROLES'],
    default: '`ingress,render,delivery`',
    meaning: 'which parts this process runs',
    audience: 'newcomer',
  },
  {
    names: ['ALLOW_PRIVATE_TARGETS'],
    default: '`false`',
    meaning: '`true` lets `url` and `webhook_url` reach loopback and private addresses (development and tests only)',
    audience: 'newcomer',
  },
  {
    names: ['WEBHOOK_RETRY_SCHEDULE'],
    default: '`10s,1m,5m,30m,2h,6h,12h,24h`',
    meaning: 'delays between webhook attempts',
    audience: 'operator',
  },
  {
    names: ['RENDER_CONCURRENCY'],
    default: 'one more than the CPUs, at most one per GB of memory, at least `2`',
    meaning: 'renders one worker process runs at once',
    audience: 'operator',
  },
  {
    names: ['RENDER_MEMORY_BUDGET'],
    default: "a quarter of the machine's (or container's) memory, at most `512` per CPU, at least `512`",
    meaning:
      "MB one worker's Chromium browsers (PSS, read from `/proc`) may hold with warm pages and the renders running; each render holds its share while it runs (a render that does not fit waits for others to end), and idle pages fill at most 80 % of it: their renders' garbage collected first, then their viewport shrunk, then they are closed, least recently used first, but for one page of each render's workspace while it runs ([performance](docs/performance.md#many-workspaces))",
    audience: 'operator',
  },
  {
    names: ['RENDER_BROWSERS'],
    default: 'one per CPU, at most one per 512 MB of `RENDER_MEMORY_BUDGET`, at least `1`',
    meaning:
      'Chromium browsers one worker process renders on, sharing its memory budget; the second and later are launched once renders overlap ([performance](docs/performance.md#browsers-per-worker))',
    audience: 'operator',
  },
  {
    names: ['RENDER_MAX_DELIVER'],
    default: '`3`',
    meaning: 'deliveries of a render request before it ends as failed',
    audience: 'operator',
  },
  {
    names: ['RENDER_ACK_WAIT'],
    default: '`30`',
    meaning: 'seconds before an unacknowledged render request is redelivered (in-progress acks extend it)',
    audience: 'operator',
  },
  {
    names: ['RENDER_QUEUE_LIMIT'],
    default: '`200`',
    meaning: 'waiting render requests above which the ingress answers `503 temporary_unavailable`',
    audience: 'operator',
  },
  {
    names: ['NODE_COMPILE_CACHE'],
    default: '`dist/compile-cache` under `make run` and in the image',
    meaning:
      "Node's own: where V8 keeps the code it compiled; the build fills it, so even a first start does not compile ([performance](docs/performance.md#starting))",
    audience: 'operator',
    readBy: 'node',
  },
  {
    names: ['MALLOC_TRIM_THRESHOLD_'],
    default: '`131072` under `make run` and in the image',
    meaning:
      "glibc's: freed memory above it goes back to the system, so the service does not keep what image encoding and recordings held ([performance](docs/performance.md#memory-the-service-gives-back))",
    audience: 'operator',
    readBy: 'node',
  },
  {
    names: ['NODE_ENV'],
    default: 'none',
    meaning:
      '`production` refuses the conveniences of a development machine: `SECRETS_KEY` must then be set, never generated',
    audience: 'newcomer',
  },
  {
    names: ['LOG_LEVEL'],
    default: '`info`',
    meaning: '`fatal` … `trace`, or `silent`',
    audience: 'newcomer',
  },
  {
    names: ['SESSION_SECRET'],
    default: 'generated once, kept in KV',
    meaning: "key of the dashboard's session cookies and mail links (≥ 32 characters); every ingress shares it",
    audience: 'operator',
  },
  {
    names: ['FILES_BASE_URL'],
    default: '`BASE_URL`',
    meaning:
      'the origin of stored files and documents; in production a separate, cookie-less origin ([security.md](docs/security.md))',
    audience: 'newcomer',
  },
  {
    names: ['TRUST_PROXY'],
    default: 'none',
    meaning:
      "which proxy hops' `X-Forwarded-For` / `X-Forwarded-Proto` are believed: `true`, or addresses, CIDR ranges, `loopback` ([security.md](docs/security.md))",
    audience: 'operator',
  },
  {
    names: ['SECRETS_KEY'],
    default: 'generated once into `DATA_DIR/secrets.key` on a development machine; required when `NODE_ENV=production`',
    meaning:
      'seals secrets at rest (workspace secret keys, the session secret, customer credentials riding a request); at least 32 characters; see [operations.md](docs/operations.md#secrets-at-rest)',
    audience: 'newcomer',
  },
  {
    names: ['SECRETS_KEY_PREVIOUS'],
    default: 'none',
    meaning: 'earlier `SECRETS_KEY` values, comma-separated, kept during a rotation to open what they sealed',
    audience: 'operator',
  },
  {
    names: ['NATS_USER', 'NATS_PASSWORD'],
    default: 'none',
    meaning: "this process's user on a NATS that requires authentication (`infra/production/nats-auth.conf`)",
    audience: 'operator',
  },
  {
    names: ['OTEL_EXPORTER_OTLP_ENDPOINT'],
    default: 'none',
    meaning: 'where traces go (OTLP over HTTP); unset, nothing is traced ([operations.md](docs/operations.md#traces))',
    audience: 'operator',
  },
  {
    names: ['GEO_PROXIES'],
    default: 'none',
    meaning:
      "the operator's proxy per country for `ip_country_code`: `de=http://user:pass@host:port,us=http://…` ([options.md](docs/options.md))",
    audience: 'operator',
  },
  {
    names: ['VISION_API_URL'],
    default: '`https://api.openai.com/v1/chat/completions`',
    meaning:
      'the OpenAI-compatible chat completions endpoint `vision_prompt` asks (a self-hosted model server works the same)',
    audience: 'operator',
  },
  {
    names: ['VISION_MODEL'],
    default: '`gpt-4o`',
    meaning: 'the model named in vision requests',
    audience: 'operator',
  },
  {
    names: ['MONITOR_MIN_INTERVAL'],
    default: '`60`',
    meaning: 'seconds: the shortest monitor interval, on every plan ([monitors.md](docs/monitors.md))',
    audience: 'operator',
  },
  {
    names: ['SMTP_URL'],
    default: 'none',
    meaning:
      "the dashboard's mail server, sent through nodemailer: `smtps://user:pass@host:465` (TLS from the first byte) or `smtp://[user:pass@]host:587` (upgraded with STARTTLS whenever the server offers it, and the certificate must verify; add `?requireTLS=true` to refuse a server without STARTTLS). A send fails after 5 s without a connection or greeting, or 15 s of silence. Unset, mail goes to the outbox stream (sealed like every secret at rest), where `npx shutterbus mail outbox` shows it; the log names each message",
    audience: 'newcomer',
  },
  {
    names: ['MAIL_FROM'],
    default: '`Shutterbus <no-reply@shutterbus.local>`',
    meaning: "sender of the dashboard's mail",
    audience: 'newcomer',
  },
] as const satisfies readonly Setting[];

/** A variable the loader may read. */
export type SettingName = Exclude<(typeof settings)[number], { readBy: 'node' }>['names'][number];

/**
 * A docs page's Markdown table of the settings for `audience`; a page in docs/ (`from: 'docs'`)
 * links to its neighbours without the folder.
 */
export function settingsTable(audience: Setting['audience'], from: 'root' | 'docs' = 'root'): string {
  const rows = settings
    .filter((setting: Setting) => setting.audience === audience)
    .map((setting: Setting) => {
      const names = setting.names.map((name) => `\`${name}\``).join(', ');
      const meaning = from === 'docs' ? setting.meaning.replaceAll('](docs/', '](') : setting.meaning;
      return `| ${names} | ${setting.default} | ${meaning} |`;
    });
  return ['| variable | default | meaning |', '| --- | --- | --- |', ...rows].join('\n');
}
