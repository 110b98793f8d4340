// A render's end announced to the ingress waiting for it: a message on the render's own core
// subject, heard by whichever process waits. When the waiting ingress shares the worker's NATS
// connection (both roles in one process), it hears the end in memory, image included, and the
// message goes without the image, or not at all when nobody else can be waiting: a shot's image
// then crosses no socket on its way to the caller but the caller's own.
import { headers as natsHeaders, type Msg, type MsgHdrs, type NatsConnection } from '@nats-io/transport-node';
import type { RenderRecord } from '../domain/render.ts';
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

/**
 * Announces a render's end on `nc`. An ingress of this process waiting for it hears it at once; the
 * message then carries no stored image (another process waiting reads it from the bucket, as for a
 * large one), and there is none for a render without a cache entry: only a cached render's
 * concurrent views wait for it besides its own caller (admission's claim, RenderQueue.waitFor).
 * An image announced before it is stored stays in the message: there is no file yet.
 */
export function announceDone(nc: NatsConnection, record: RenderRecord, bytes?: Buffer, unstored = false): void {
  // A recording comes with no bytes in memory (its file is streamed from the store): no image.
  const image = bytes && bytes.length > 0 ? bytes : undefined;
  const here = waiting.get(nc)?.get(record.render_id);
  if (here) {
    const result: RenderResult = { record, ...(image ? { image } : {}), ...(unstored ? { unstored: true } : {}) };
    for (const hear of [...here]) hear(result);
    if (record.cache === undefined) return;
  }
  const inline = here && !unstored ? undefined : image;
  nc.publish(names.renderDone(record.render_id), ...renderDoneMessage(record, inline, unstored));
}

/**
 * Listens for a render's end from now on: on its done subject, and in this process (announceDone).
 * `first` answers with the first result `accept` takes, or null after `waitMs` or once the connection
 * closed. A callback subscription ended by one `stop`: the server hears a single UNSUB, where an
 * iterator with `max` sends three.
 */
export function listenDone(
  nc: NatsConnection,
  renderId: string,
  accept: (result: RenderResult) => boolean = () => true,
) {
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
  const subscription = nc.subscribe(names.renderDone(renderId), {
    callback: (err, message) => {
      if (err) return reject(err);
      try {
        hear(readRenderDone(message));
      } catch (error) {
        reject(error);
      }
    },
  });
  void subscription.closed.then(() => resolve(null));
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
      subscription.unsubscribe();
    },
  };
}
