// A render's end announced to the ingress waiting for it: a message on the render's own core
// subject, heard by whichever process waits, or, for a render only its caller waits for, on a
// subject of the caller's connection that the request names (one subscription for all its
// renders). When the waiting ingress shares the worker's NATS connection (both roles in one
// process), it hears the end in memory, image included, and the message goes without the image,
// or not at all when nobody else can be waiting: a shot's image then crosses no socket on its way
// to the caller but the caller's own.
import { randomBytes } from 'node:crypto';
import {
  headers as natsHeaders,
  type Msg,
  type MsgHdrs,
  type NatsConnection,
  type Subscription,
} from '@nats-io/transport-node';
import type { RenderRecord, RenderRequest } from '../domain/render.ts';
import { names } from '../jetstream/topology.ts';

/** The header of a render's done message that carries its record. */
const RECORD_HEADER = 'Shutterbus-Record';

/** Images up to this size travel in the done message, sparing the waiting ingress a read from the bucket. */
const INLINE_IMAGE_LIMIT = 768 * 1024;

/** The header of a done message sent before the image is stored (docs/operations.md, "Outages"). */
const UNSTORED_HEADER = 'Shutterbus-Unstored';

/**
 * A render's end as announced to the ingress waiting for it: the record, and the image when it was
 * heard in memory, or came inline (small enough for the message).
 * `unstored`: the store did not answer within the caller's timeout, so the image (inline, when small)
 * is announced before it is stored; the record is not written yet and has no file, and the worker
 * keeps trying the store. A caller may be answered with the image, or refused (the render abandoned).
 */
export interface RenderResult {
  record: RenderRecord;
  image?: Buffer;
  unstored?: true;
}

/** The payload and headers of a done message; `unstored` marks an image announced before it is stored. */
function renderDoneMessage(record: RenderRecord, image?: Buffer, unstored = false): [Uint8Array, { headers: MsgHdrs }] {
  const headers = natsHeaders();
  headers.set(RECORD_HEADER, JSON.stringify(record));
  if (unstored) headers.set(UNSTORED_HEADER, '1');
  const inline = image && image.length <= INLINE_IMAGE_LIMIT ? image : new Uint8Array();
  return [inline, { headers }];
}

/** Reads a done message back. */
export function readRenderDone(message: Msg): RenderResult {
  const record = JSON.parse(message.headers!.get(RECORD_HEADER)) as RenderRecord;
  const unstored = message.headers!.has(UNSTORED_HEADER) ? { unstored: true as const } : {};
  return message.data.length > 0 ? { record, image: Buffer.from(message.data), ...unstored } : { record, ...unstored };
}

type Hearer = (result: RenderResult) => void;

/** The ingresses waiting in this process, by connection, then by render id. */
const waiting = new WeakMap<NatsConnection, Map<string, Set<Hearer>>>();

/** Tells this process's listeners for `renderId` on `nc` of `result`; whether there were any. */
function tellHere(nc: NatsConnection, renderId: string, result: RenderResult): boolean {
  const here = waiting.get(nc)?.get(renderId);
  if (!here) return false;
  for (const hear of [...here]) hear(result);
  return true;
}

/** Where a request's end is announced: its caller's ingress's own subject when it names one, else the render's. */
export const doneSubjectOf = (request: Pick<RenderRequest, 'render_id' | 'done_to'>): string =>
  request.done_to ?? names.renderDone(request.render_id);

/**
 * Announces a render's end on `subject` (doneSubjectOf its request). An ingress of this process
 * waiting for it hears it at once; the message then carries no stored image (another process
 * waiting reads it from the bucket, as for a large one), and there is none for a render without a
 * cache entry: only a cached render's concurrent views wait for it besides its own caller
 * (admission's claim, RenderQueue.waitFor). An image announced before it is stored stays in the
 * message: there is no file yet.
 */
export function announceDone(
  nc: NatsConnection,
  subject: string,
  record: RenderRecord,
  bytes?: Buffer,
  unstored = false,
): void {
  // A recording comes with no bytes in memory (its file is streamed from the store): no image.
  const image = bytes && bytes.length > 0 ? bytes : undefined;
  const result: RenderResult = { record, ...(image ? { image } : {}), ...(unstored ? { unstored: true } : {}) };
  const heardHere = tellHere(nc, record.render_id, result);
  if (heardHere && record.cache === undefined) return;
  const inline = heardHere && !unstored ? undefined : image;
  nc.publish(subject, ...renderDoneMessage(record, inline, unstored));
}

/** A wait for one render's end, heard from now on. */
export interface DoneListener {
  /** The first result the listener accepts, or null after `waitMs` or once the connection closed. */
  first(waitMs: number): Promise<RenderResult | null>;
  stop(): void;
}

/**
 * What a listener hears besides this process's announcements: `attach` starts hearing `hear`,
 * `fail` and `end` (the source closed) and gives back how to stop.
 */
type Source = (hear: Hearer, fail: (err: unknown) => void, end: () => void) => () => void;

function listen(
  nc: NatsConnection,
  renderId: string,
  accept: (result: RenderResult) => boolean,
  attach: Source,
): DoneListener {
  let resolve!: (result: RenderResult | null) => void;
  let reject!: (err: unknown) => void;
  const heard = new Promise<RenderResult | null>((heardResult, heardFailure) => {
    resolve = heardResult;
    reject = heardFailure;
  });
  // `first` may never be asked (the submit failed): a failure heard meanwhile is not unhandled.
  heard.catch(() => undefined);
  const hear: Hearer = (result) => {
    if (accept(result)) resolve(result);
  };
  let byRender = waiting.get(nc);
  if (!byRender) waiting.set(nc, (byRender = new Map()));
  let here = byRender.get(renderId);
  if (!here) byRender.set(renderId, (here = new Set()));
  here.add(hear);
  const detach = attach(hear, reject, () => resolve(null));
  return {
    async first(waitMs: number): Promise<RenderResult | null> {
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<null>((passed) => {
        timer = setTimeout(() => passed(null), waitMs);
      });
      try {
        return await Promise.race([heard, deadline]);
      } finally {
        clearTimeout(timer);
      }
    },
    stop: () => {
      here.delete(hear);
      if (here.size === 0 && byRender.get(renderId) === here) byRender.delete(renderId);
      detach();
    },
  };
}

/**
 * Listens for a render's end from now on: on its done subject, and in this process (announceDone).
 * A callback subscription ended by one `stop`: the server hears a single UNSUB, where an iterator
 * with `max` sends three.
 */
export function listenDone(
  nc: NatsConnection,
  renderId: string,
  accept: (result: RenderResult) => boolean = () => true,
): DoneListener {
  return listen(nc, renderId, accept, (hear, fail, end) => {
    const subscription = nc.subscribe(names.renderDone(renderId), {
      callback: (err, message) => {
        if (err) return fail(err);
        try {
          hear(readRenderDone(message));
        } catch (error) {
          fail(error);
        }
      },
    });
    void subscription.closed.then(end);
    return () => subscription.unsubscribe();
  });
}

/** A connection's own done subjects (names.renderDoneTo): one subscription for all of them, made at first use. */
interface DoneInbox {
  token: string;
  subscription: Subscription;
  /** The `end` of every listener on it, told when the subscription closes. */
  ends: Set<() => void>;
}
const inboxes = new WeakMap<NatsConnection, DoneInbox>();

function inboxOf(nc: NatsConnection): DoneInbox {
  const known = inboxes.get(nc);
  if (known && !known.subscription.isClosed()) return known;
  const token = randomBytes(12).toString('hex');
  const subscription = nc.subscribe(names.renderDoneInbox(token), {
    callback: (err, message) => {
      // An error closes the subscription, which ends its listeners (below).
      if (err) return;
      let result: RenderResult;
      try {
        result = readRenderDone(message);
      } catch {
        return; // Not a done message: only workers publish here, so none comes.
      }
      tellHere(nc, message.subject.slice(message.subject.lastIndexOf('.') + 1), result);
    },
  });
  const inbox: DoneInbox = { token, subscription, ends: new Set() };
  void subscription.closed.then(() => {
    for (const end of [...inbox.ends]) end();
  });
  inboxes.set(nc, inbox);
  return inbox;
}

/**
 * Listens for the end of a render only its caller waits for (a synchronous request without a
 * cache entry): in this process, and on `subject`, the connection's own subject for it, which the
 * request names (RenderRequest.done_to). Every such wait on a connection shares one subscription,
 * so a render costs the server no subscription of its own.
 */
export function listenOwnDone(nc: NatsConnection, renderId: string): DoneListener & { subject: string } {
  const inbox = inboxOf(nc);
  const listener = listen(
    nc,
    renderId,
    () => true,
    (_hear, _fail, end) => {
      inbox.ends.add(end);
      return () => inbox.ends.delete(end);
    },
  );
  return { ...listener, subject: names.renderDoneTo(inbox.token, renderId) };
}
