// Stream, consumer and bucket names and configs, created idempotently at start.
import {
  AckPolicy,
  DeliverPolicy,
  DiscardPolicy,
  RetentionPolicy,
  StorageType,
  jetstreamManager,
  type JetStreamManager,
  type StreamConfig,
} from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Config } from '../config.ts';
import { isApiError, JetStreamApiCodes } from './errors.ts';
import { HAND_OVER_PENDING, handOverLeadership } from './hand-over.ts';
import { guardReplicatedBucket } from './kv-json.ts';

const nanos = (seconds: number) => Math.round(seconds * 1e9);

/** Names of everything Shutterbus keeps in NATS. */
export const names = {
  renderStream: 'RENDERS',
  /** Render requests are published per workspace so replay can select one workspace. */
  renderSubject: (workspaceId: string) => `sb.render.request.${workspaceId}`,
  renderSubjects: 'sb.render.request.>',
  renderConsumer: 'render-workers',
  /** Core-NATS subject on which a finished render is announced to the ingress waiting for it. */
  renderDone: (renderId: string) => `sb.render.done.${renderId}`,
  /**
   * Core-NATS subject of one ingress connection's own announcements, one render each: a synchronous
   * request without a cache entry names it (RenderRequest.done_to), so its caller's ingress hears
   * the end on one subscription for all its renders instead of one per render.
   */
  renderDoneTo: (inbox: string, renderId: string) => `sb.render.done.to.${inbox}.${renderId}`,
  /** What that connection subscribes to once: every one of its renders' subjects. */
  renderDoneInbox: (inbox: string) => `sb.render.done.to.${inbox}.*`,
  rendersBucket: 'renders',
  workspacesBucket: 'workspaces',
  accessKeysBucket: 'access_keys',
  usageBucket: 'usage',
  /** Cached signed GETs: one entry per workspace and signed query. */
  renderCacheBucket: 'render_cache',
  /** Dashboard accounts, keyed by normalized email; the dashboard's own settings (the session secret). */
  accountsBucket: 'accounts',
  dashboardBucket: 'dashboard',
  /** Each workspace's latest finished renders, for the dashboard's usage page. */
  recentRendersBucket: 'recent_renders',
  /** Signed-in dashboard sessions, keyed by account and session id (src/accounts/sessions.ts). */
  sessionsBucket: 'sessions',
  /** Mail written instead of sent when SMTP_URL is unset (`shutterbus mail outbox`). */
  mailStream: 'MAIL_OUTBOX',
  mailSubject: 'sb.mail.outbox',
  /** Webhook delivery jobs, per workspace like render requests so replay can select one workspace. */
  deliveryStream: 'DELIVERIES',
  deliverySubject: (workspaceId: string) => `sb.delivery.job.${workspaceId}`,
  deliverySubjects: 'sb.delivery.job.>',
  deliveryConsumer: 'webhook-senders',
  deliveriesBucket: 'deliveries',
  /** The render consumer's max-deliveries advisories, kept in a stream so none is missed while no worker runs. */
  renderGiveUpStream: 'RENDER_GIVE_UPS',
  renderGiveUpConsumer: 'render-give-ups',
  /** Monitors (docs/monitors.md): their records, and one tick message per monitor, re-delivered when due. */
  monitorsBucket: 'monitors',
  /** Profiles (docs/profiles.md): each workspace's named browser states, sealed. */
  profilesBucket: 'profiles',
  monitorTickStream: 'MONITOR_TICKS',
  monitorTickSubject: (workspaceId: string, monitorId: string) => `sb.monitor.tick.${workspaceId}.${monitorId}`,
  monitorTickSubjects: 'sb.monitor.tick.>',
  monitorTickConsumer: 'monitor-schedulers',
  maxDeliveriesAdvisory: (stream: string, consumer: string) =>
    `$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.${stream}.${consumer}`,
} as const;

/** How long the render stream keeps requests, so operators can replay them. */
const RENDER_RETENTION_SECONDS = 7 * 24 * 3600;

/** How long the sessions bucket keeps an entry: a session cookie's lifetime, plus a day. */
const SESSION_RETENTION_SECONDS = 15 * 24 * 3600;

/** Everything opened once per process and handed to the roles. */
export interface Topology {
  jsm: JetStreamManager;
  renders: KV;
  workspaces: KV;
  accessKeys: KV;
  usage: KV;
  renderCache: KV;
  deliveries: KV;
  accounts: KV;
  dashboard: KV;
  recentRenders: KV;
  sessions: KV;
  monitors: KV;
  profiles: KV;
}

/** Creates (or updates to the current config) the streams, consumers and buckets; safe to run on every start. */
export async function ensureTopology(nc: NatsConnection, config: Config): Promise<Topology> {
  const jsm = await jetstreamManager(nc);
  const replicas = config.jetstreamReplicas;
  await ensureWorkStream(nc, jsm, replicas, {
    stream: names.renderStream,
    subjects: names.renderSubjects,
    consumer: names.renderConsumer,
    ackWaitSeconds: config.renderAckWaitSeconds,
    maxDeliver: config.renderMaxDeliver,
  });
  await ensureWorkStream(nc, jsm, replicas, {
    stream: names.renderGiveUpStream,
    subjects: names.maxDeliveriesAdvisory(names.renderStream, names.renderConsumer),
    consumer: names.renderGiveUpConsumer,
    ackWaitSeconds: 30,
    maxDeliver: -1,
  });
  await ensureWorkStream(nc, jsm, replicas, {
    stream: names.deliveryStream,
    subjects: names.deliverySubjects,
    consumer: names.deliveryConsumer,
    ackWaitSeconds: DELIVERY_ACK_WAIT_SECONDS,
    // Unlimited: the attempt count lives in the `deliveries` bucket, which ends a delivery after its last attempt.
    maxDeliver: -1,
  });
  await ensureMonitorTicks(nc, jsm, replicas, config.renderAckWaitSeconds);
  const kvm = new Kvm(nc);
  const bucket = (name: string, options: { history: number; ttl?: number }) =>
    ensureBucket(kvm, jsm, replicas, name, options);
  const renders = await bucket(names.rendersBucket, { history: 1, ttl: RENDER_RETENTION_SECONDS * 1000 });
  const workspaces = await bucket(names.workspacesBucket, { history: 5 });
  const accessKeys = await bucket(names.accessKeysBucket, { history: 1 });
  const usage = await bucket(names.usageBucket, { history: 1 });
  // Entries say when they expire; the bucket's age limit (the longest cache_ttl, plus a day) clears the rest.
  const renderCache = await bucket(names.renderCacheBucket, { history: 1, ttl: (2_592_000 + 86_400) * 1000 });
  const deliveries = await bucket(names.deliveriesBucket, { history: 1, ttl: RENDER_RETENTION_SECONDS * 1000 });
  const accounts = await bucket(names.accountsBucket, { history: 5 });
  const dashboard = await bucket(names.dashboardBucket, { history: 1 });
  const recentRenders = await bucket(names.recentRendersBucket, { history: 1 });
  // A session lives 14 days at most; the bucket's age limit clears those never signed out.
  const sessions = await bucket(names.sessionsBucket, { history: 1, ttl: SESSION_RETENTION_SECONDS * 1000 });
  const monitors = await bucket(names.monitorsBucket, { history: 1 });
  const profiles = await bucket(names.profilesBucket, { history: 1 });
  // The outbox is capped: it is for reading links in development, not an archive.
  await ensureStream(jsm, replicas, {
    name: names.mailStream,
    subjects: [names.mailSubject],
    storage: StorageType.File,
    max_msgs: 1000,
    max_age: nanos(7 * 24 * 3600),
    discard: DiscardPolicy.Old,
  });
  return {
    jsm,
    renders,
    workspaces,
    accessKeys,
    usage,
    renderCache,
    deliveries,
    accounts,
    dashboard,
    recentRenders,
    sessions,
    monitors,
    profiles,
  };
}

/** Every stream the service keeps, KV buckets' included: what readiness asks JetStream about. */
export const allStreams: readonly string[] = [
  names.renderStream,
  names.renderGiveUpStream,
  names.deliveryStream,
  names.mailStream,
  names.monitorTickStream,
  ...[
    names.rendersBucket,
    names.workspacesBucket,
    names.accessKeysBucket,
    names.usageBucket,
    names.renderCacheBucket,
    names.deliveriesBucket,
    names.accountsBucket,
    names.dashboardBucket,
    names.recentRendersBucket,
    names.sessionsBucket,
    names.monitorsBucket,
    names.profilesBucket,
  ].map((bucket) => `KV_${bucket}`),
];

/**
 * Opens a KV bucket, creating it when absent. Reads go to the stream leader (no direct gets,
 * which any replica answers, however far behind), so a read always sees the latest write.
 */
async function ensureBucket(
  kvm: Kvm,
  jsm: JetStreamManager,
  replicas: number,
  name: string,
  options: { history: number; ttl?: number },
): Promise<KV> {
  const kv = await kvm.create(name, { ...options, replicas, allow_direct: false });
  if ((await raiseReplicas(jsm, `KV_${name}`, replicas, { allow_direct: false })) > 1) {
    guardReplicatedBucket(kv, { js: jsm.jetstream(), jsm, name });
  }
  return kv;
}

/**
 * Brings an existing stream to at least `replicas` (never fewer: a CLI run without the setting
 * must not shrink a cluster's streams), applying `also` when it differs; returns its replicas.
 */
async function raiseReplicas(
  jsm: JetStreamManager,
  stream: string,
  replicas: number,
  also: Partial<StreamConfig> = {},
): Promise<number> {
  const { config } = await jsm.streams.info(stream);
  const wanted = { ...also, num_replicas: Math.max(config.num_replicas, replicas) };
  if (!holds(config, wanted)) await jsm.streams.update(stream, wanted);
  return wanted.num_replicas;
}

/** Seconds a delivery attempt may hold its job before JetStream hands it to another sender (attempt timeout is 10 s). */
export const DELIVERY_ACK_WAIT_SECONDS = 30;

/** A stream of jobs and the durable pull consumer that works it. */
interface WorkStream {
  stream: string;
  subjects: string;
  consumer: string;
  ackWaitSeconds: number;
  maxDeliver: number;
}

/** True when `current` already holds every field of `wanted`. */
function holds(current: object, wanted: object): boolean {
  return Object.entries(wanted).every(
    ([key, value]) => JSON.stringify((current as Record<string, unknown>)[key]) === JSON.stringify(value),
  );
}

/**
 * Creates a stream, or brings an existing one to `config` with at least `replicas` (never fewer:
 * a CLI run without the setting must not shrink a cluster's streams). An unchanged stream is only
 * read, so a start with a node of the cluster down changes nothing.
 */
async function ensureStream(
  jsm: JetStreamManager,
  replicas: number,
  config: Partial<StreamConfig> & { name: string },
): Promise<void> {
  const current = await jsm.streams.info(config.name).catch((err) => {
    if (isApiError(err, JetStreamApiCodes.StreamNotFound)) return null;
    throw err;
  });
  if (!current) {
    await jsm.streams.add({ ...config, num_replicas: replicas });
    return;
  }
  const wanted = { ...config, num_replicas: Math.max(current.config.num_replicas, replicas) };
  if (!holds(current.config, wanted)) await jsm.streams.update(config.name, wanted);
}

async function ensureWorkStream(
  nc: NatsConnection,
  jsm: JetStreamManager,
  replicas: number,
  work: WorkStream,
): Promise<void> {
  await ensureStream(jsm, replicas, {
    name: work.stream,
    subjects: [work.subjects],
    // Limits retention, not a work queue: acked jobs stay for replay until they age out.
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    max_age: nanos(RENDER_RETENTION_SECONDS),
    duplicate_window: nanos(120),
    discard: DiscardPolicy.Old,
  });
  const consumer = {
    durable_name: work.consumer,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.New,
    filter_subject: work.subjects,
    ack_wait: nanos(work.ackWaitSeconds),
    max_deliver: work.maxDeliver,
    max_ack_pending: 1000,
    num_replicas: replicas,
  };
  const current = await jsm.consumers.info(work.stream, work.consumer).catch((err) => {
    if (isApiError(err, JetStreamApiCodes.ConsumerNotFound)) return null;
    throw err;
  });
  if (!current) {
    await jsm.consumers.add(work.stream, consumer);
    return;
  }
  const { deliver_policy: _immutable, ...mutable } = consumer;
  const raise = replicas > (current.config.num_replicas ?? 0);
  // A raise marks the consumer until its hand-over is done, so a start cut off in between leaves it to the next.
  const wanted = raise
    ? { ...mutable, num_replicas: replicas, description: HAND_OVER_PENDING }
    : { ...mutable, num_replicas: current.config.num_replicas };
  if (!holds(current.config, wanted)) await jsm.consumers.update(work.stream, work.consumer, wanted);
  if (raise || current.config.description === HAND_OVER_PENDING) {
    await handOverLeadership(nc, jsm, work.stream, work.consumer);
    await jsm.consumers.update(work.stream, work.consumer, { description: '' });
  }
}

/**
 * The tick stream: one message per monitor, never acked while the monitor runs, each delivery
 * naked with the delay until the monitor is next due. A work queue without an age limit: a tick
 * message lives as long as its monitor, however long its interval, and goes once acked.
 */
async function ensureMonitorTicks(
  nc: NatsConnection,
  jsm: JetStreamManager,
  replicas: number,
  ackWaitSeconds: number,
): Promise<void> {
  await ensureStream(jsm, replicas, {
    name: names.monitorTickStream,
    subjects: [names.monitorTickSubjects],
    retention: RetentionPolicy.Workqueue,
    storage: StorageType.File,
    duplicate_window: nanos(120),
  });
  const consumer = {
    durable_name: names.monitorTickConsumer,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    filter_subject: names.monitorTickSubjects,
    // As long as a render's: a scheduler that died holding a tick is replaced as fast as a render worker.
    ack_wait: nanos(ackWaitSeconds),
    max_deliver: -1,
    // Every monitor's tick is pending all the time: no limit but the number of monitors.
    max_ack_pending: -1,
    num_replicas: replicas,
  };
  const current = await jsm.consumers.info(names.monitorTickStream, names.monitorTickConsumer).catch((err) => {
    if (isApiError(err, JetStreamApiCodes.ConsumerNotFound)) return null;
    throw err;
  });
  if (!current) return void (await jsm.consumers.add(names.monitorTickStream, consumer));
  // As for the work streams' consumers: replicas only go up, and a raise hands leadership over.
  const raise = replicas > (current.config.num_replicas ?? 0);
  const wanted = raise
    ? { ack_wait: consumer.ack_wait, num_replicas: replicas, description: HAND_OVER_PENDING }
    : { ack_wait: consumer.ack_wait, num_replicas: current.config.num_replicas };
  if (!holds(current.config, wanted))
    await jsm.consumers.update(names.monitorTickStream, names.monitorTickConsumer, wanted);
  if (raise || current.config.description === HAND_OVER_PENDING) {
    await handOverLeadership(nc, jsm, names.monitorTickStream, names.monitorTickConsumer);
    await jsm.consumers.update(names.monitorTickStream, names.monitorTickConsumer, { description: '' });
  }
}
