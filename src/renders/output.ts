// A render's output into the stores, each an OutputStore (src/storage/output-store.ts): its files
// in the service's own store (the output, its slices, its metadata content, a failed render's
// capture) and the upload to the customer's bucket (docs/storage.md).
import { LATE, type StoredImage, type StoreImageInput, type UploadOutputInput } from '../../actors/render.machine.ts';
import { DEFAULT_FILE_LIFETIME_SECONDS, newFileName } from '../domain/files.ts';
import type { PageMetadata, RecordedMetadata } from '../domain/metadata.ts';
import type { OutputFormat, RenderOptions } from '../domain/options.ts';
import { isFinal, type RenderRequest, type SavedFiles } from '../domain/render.ts';
import type { PageObservation } from '../domain/options.ts';
import { siblingKeyOf } from '../domain/storage.ts';
import type { StoreResult } from '../domain/storage.ts';
import { ServiceError } from '../errors.ts';
import type { Logger } from '../log.ts';
import { sliceImage } from '../render/outputs/image.ts';
import { FAILURE_CAPTURE_LIFETIME_SECONDS } from '../render/outputs/failure-capture.ts';
import { retryWhile } from '../retry.ts';
import { uploadOutput, type CustomerBucketPolicy } from '../storage/customer-bucket.ts';
import { sizeOf, type OutputBytes, type OutputStore } from '../storage/output-store.ts';
import { isStoreUnavailable } from '../storage/store.ts';
import { patience } from './patience.ts';
import type { RenderRecords } from './records.ts';

/** What storing a render's output needs. */
export interface OutputDeps {
  log: Logger;
  records: RenderRecords;
  /** The service's own store. */
  store: OutputStore;
  /** Opens and reaches customers' buckets for requests with `store` (docs/storage.md). */
  customerBuckets?: CustomerBucketPolicy;
}

/** The caller a render may be answering: its deadline, and whether it was answered before the output was stored. */
export interface WaitingCaller {
  answerBy: number | undefined;
  answered(): boolean;
  /** Answers the caller with the image before it is stored; called once, when the store is out of reach. */
  answerEarly(): void;
}

/**
 * How long a render keeps retrying an upload its customer's storage failed for now: an asynchronous
 * one has minutes; a caller waiting is answered within seconds (and never after its deadline).
 */
const UPLOAD_PATIENCE_MS = 2 * 60_000;
const SYNC_UPLOAD_PATIENCE_MS = 5000;
/**
 * A caller waiting hears its image within its own timeout: the store is tried until then (and at
 * least this long after the capture), and past that the image is announced before it is stored.
 */
const MIN_STORE_TRY_MS = 2000;
/** The longest a failed render waits to store its failure capture; a late one is left unrecorded and swept with its day. */
const FAILURE_CAPTURE_STORE_LIMIT_MS = 3000;

/** A monitor's capture is the baseline of its next tick: kept two intervals at least (docs/monitors.md). */
const monitorFileLifetime = (request: RenderRequest) =>
  request.monitor ? Math.max(DEFAULT_FILE_LIFETIME_SECONDS, 2 * request.monitor.interval + 86_400) : undefined;

/** Seconds a render's files live: a cached file as long as its cache entry, any other as long as the render records. */
const fileLifetime = (request: RenderRequest) =>
  request.cache?.ttl ?? monitorFileLifetime(request) ?? DEFAULT_FILE_LIFETIME_SECONDS;

/** Until when a waiting caller's render tries the store before it answers with the image unstored. */
const promptDeadline = (answerBy: number | undefined, request: RenderRequest) =>
  answerBy === undefined
    ? undefined
    : Math.min(
        patience(answerBy),
        Math.max(Date.parse(request.created_at) + request.options.timeout * 1000, Date.now() + MIN_STORE_TRY_MS),
      );

/**
 * Puts a render's files into the service's store. The output is in hand: an outage of the store is
 * waited out rather than rendering again. A caller waiting is not kept past its own timeout for it:
 * then the image is announced unstored (its ingress answers with it, or refuses and abandons the
 * render), and the store is tried on as for an asynchronous render, nobody waiting
 * (docs/operations.md, "Outages").
 */
function fileWriter(deps: OutputDeps, request: RenderRequest, signal: AbortSignal, caller: WaitingCaller) {
  const expiresAt = new Date(Date.now() + fileLifetime(request) * 1000);
  const promptBy = promptDeadline(caller.answerBy, request);
  let until = promptBy ?? patience(undefined);
  const answerEarly = () => {
    if (caller.answered()) return;
    until = patience(undefined);
    caller.answerEarly();
  };
  // Once its caller was answered, a render whose caller refused the unstored image (and so
  // abandoned it) stops trying: its end is recorded already.
  const putUnlessAbandoned = async (fileName: string, bytes: OutputBytes, format: OutputFormat) => {
    const current = caller.answered() ? await deps.records.get(request.render_id).catch(() => null) : null;
    if (current && isFinal(current)) throw new ServiceError('temporary_unavailable', {}, { message: LATE.message });
    await deps.store.put(fileName, bytes, format);
  };
  const attempt = (fileName: string, bytes: OutputBytes, format: OutputFormat): Promise<void> => {
    const deadline = until;
    return retryWhile(() => putUnlessAbandoned(fileName, bytes, format), isStoreUnavailable, deadline, signal).catch(
      (err) => {
        if (!isStoreUnavailable(err) || deadline !== promptBy || signal.aborted) throw err;
        answerEarly();
        return attempt(fileName, bytes, format);
      },
    );
  };
  /** Stores `bytes` as a new file of `format`; its name. */
  return async (format: OutputFormat, bytes: OutputBytes): Promise<string> => {
    const fileName = newFileName(format, expiresAt);
    await attempt(fileName, bytes, format).catch((err) => {
      throw isStoreUnavailable(err) ? new ServiceError('temporary_unavailable', {}, { cause: err }) : err;
    });
    return fileName;
  };
}

type PutFile = ReturnType<typeof fileWriter>;

/** full_page_slices: the capture cut into slices, each a file of its own beside the whole. */
async function storeSlices(put: PutFile, image: Buffer, options: RenderOptions) {
  if (!options.full_page_slices) return undefined;
  return Promise.all(
    (await sliceImage(image, options)).map(async ({ bytes, ...slice }) => ({
      ...slice,
      file_name: await put(options.format, bytes),
    })),
  );
}

/** save_formats: each of the page's files stored beside the output; their names by format. */
async function storeSaved(put: PutFile, saved: PageObservation['saved']): Promise<SavedFiles | undefined> {
  if (!saved || saved.length === 0) return undefined;
  const names = await Promise.all(saved.map(async ({ format, bytes }) => [format, await put(format, bytes)] as const));
  return Object.fromEntries(names);
}

/** metadata_content is a file of its own, beside the output: records and messages stay small. */
async function storeMetadata(put: PutFile, metadata: PageMetadata): Promise<RecordedMetadata> {
  const { content, ...fields } = metadata;
  if (!content) return fields;
  return {
    ...fields,
    content: { file_name: await put(content.format, Buffer.from(content.text, 'utf8')), format: content.format },
  };
}

/** Stores a render's output and what goes with it (slices, metadata content): where they went. */
export async function storeOutput(
  deps: OutputDeps,
  input: StoreImageInput,
  signal: AbortSignal,
  caller: WaitingCaller,
): Promise<StoredImage> {
  const { request, observation } = input;
  const { image, metadata, warnings } = observation;
  const put = fileWriter(deps, request, signal, caller);
  // A recording is a file on disk, streamed into the store; anything else is in memory.
  const output = observation.file ?? image;
  const fileName = await put(request.options.format, output);
  const slices = await storeSlices(put, image, request.options);
  const saved = await storeSaved(put, observation.saved);
  const said = {
    ...(warnings && warnings.length > 0 ? { warnings } : {}),
    ...(slices ? { slices } : {}),
    ...(saved ? { saved } : {}),
  };
  const recorded = metadata ? { metadata: await storeMetadata(put, metadata) } : {};
  // A monitor's text, stored as a Markdown file (plain lines are Markdown): the next tick compares with it.
  const text =
    observation.monitorText !== undefined
      ? { monitor_text_file_name: await put('markdown', Buffer.from(observation.monitorText, 'utf8')) }
      : {};
  input.log.mark('stored');
  return { file_name: fileName, size_bytes: sizeOf(output), ...recorded, ...said, ...text };
}

/** Uploads the output to the customer's bucket (store=true), within the caller's deadline when one waits. */
export async function uploadToCustomer(
  deps: OutputDeps,
  { request, observation }: UploadOutputInput,
  answerBy: number | undefined,
  signal: AbortSignal,
): Promise<StoreResult> {
  const { store: target, options } = request;
  if (!target || !deps.customerBuckets) throw new Error('uploadOutput: no store target or no customer bucket policy');
  const until =
    answerBy === undefined
      ? Date.now() + UPLOAD_PATIENCE_MS
      : Math.min(answerBy - 1000, Date.now() + SYNC_UPLOAD_PATIENCE_MS);
  const deadline = answerBy === undefined ? undefined : answerBy - 1000;
  const policy = { ...deps.customerBuckets, until, deadline, signal };
  const uploaded = await uploadOutput(target, observation.file ?? observation.image, options.format, policy);
  // save_formats' files go beside it: the same key, each with its own extension.
  for (const { format, bytes } of observation.saved ?? []) {
    await uploadOutput({ ...target, key: siblingKeyOf(target.key, options.format, format) }, bytes, format, policy);
  }
  return uploaded;
}

/**
 * Stores a failed render's capture for a day; best effort and brief (a store that is slow or out of
 * reach must not hold up the failure's answer): without it the render fails all the same.
 */
export async function storeFailureCapture(
  deps: Pick<OutputDeps, 'log' | 'store'>,
  image: Buffer,
  line: Record<string, unknown>,
): Promise<string | undefined> {
  const fileName = newFileName('jpeg', new Date(Date.now() + FAILURE_CAPTURE_LIFETIME_SECONDS * 1000));
  const put = deps.store.put(fileName, image, 'jpeg').then(
    () => true,
    (err: unknown) => {
      deps.log.warn({ ...line, err }, 'failure capture not stored');
      return false;
    },
  );
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(resolve, FAILURE_CAPTURE_STORE_LIMIT_MS, false)));
  const stored = await Promise.race([put, late]).finally(() => clearTimeout(timer));
  return stored ? fileName : undefined;
}
