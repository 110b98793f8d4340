// A customer's own S3-compatible bucket (docs/storage.md): uploads signed with their keys (SigV4,
// path-style, their region), sent only to the address that passed the address rules.
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { Client } from 'minio';
import { ServiceError } from '../errors.ts';
import { contentTypes, type OutputFormat } from '../domain/options.ts';
import {
  objectLocation,
  storageClasses,
  type BucketAccess,
  type StoreResult,
  type StoreTarget,
} from '../domain/storage.ts';
import { resolvePublic, type LookupFn } from '../net/target.ts';
import { retryWhile, withTimeout } from '../retry.ts';
import type { Sealer } from '../secrets/sealer.ts';
import {
  PART_SIZE,
  SLOWEST_UPLOAD_BYTES_PER_MS,
  sizeOf,
  uploadBody,
  type OutputBytes,
  type OutputStore,
  UploadClient,
} from './output-store.ts';
import { isStoreUnavailable } from './store.ts';

export { PART_SIZE };
/** How long one attempt may take: a stalled endpoint must not hold a render for ever. */
const ATTEMPT_TIMEOUT_MS = 60_000;
const ATTEMPT_TIMEOUT = 'StorageTimeoutError';

/** How objects are written: the ACL and the storage class sent with each. */
export interface ObjectSettings {
  acl: '' | 'public-read';
  storageClass: keyof typeof storageClasses;
}

/** A bucket's keys in plain text: only ever in memory, for one upload or one connection test. */
export type OpenedAccess = Omit<BucketAccess, 'secret_access_key'> & { secret_access_key: string };

/** A connection's DNS answer, fixed to the address that was checked (no second lookup, no rebinding). */
function pinnedLookup(address: string): LookupFunction {
  const family = address.includes(':') ? 6 : 4;
  return ((_host: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  }) as LookupFunction;
}

/** One customer bucket, reached at one checked address. */
export class CustomerBucket implements OutputStore {
  private readonly client: Client;
  private readonly agent: http.Agent;

  constructor(
    private readonly access: OpenedAccess,
    address: string,
    private readonly settings: ObjectSettings = { acl: '', storageClass: 'standard' },
  ) {
    const endpoint = new URL(access.endpoint);
    const secure = endpoint.protocol === 'https:';
    // TLS still verifies the certificate against the endpoint's name; only the lookup is fixed.
    this.agent = secure
      ? new https.Agent({ lookup: pinnedLookup(address) })
      : new http.Agent({ lookup: pinnedLookup(address) });
    this.client = new UploadClient({
      endPoint: endpoint.hostname.replace(/^\[|\]$/g, ''),
      port: endpoint.port ? Number(endpoint.port) : undefined,
      useSSL: secure,
      accessKey: access.access_key_id,
      secretKey: access.secret_access_key,
      region: access.region,
      pathStyle: true,
      partSize: PART_SIZE,
      transportAgent: this.agent,
    });
  }

  /**
   * Uploads one object (in parts above PART_SIZE), from memory or streamed from its file on disk;
   * an attempt without an answer within `timeoutMs` fails.
   */
  async put(key: string, bytes: OutputBytes, format: OutputFormat, timeoutMs = ATTEMPT_TIMEOUT_MS): Promise<void> {
    const headers: Record<string, string> = {
      'Content-Type': contentTypes[format],
      'x-amz-storage-class': storageClasses[this.settings.storageClass],
      ...(this.settings.acl ? { 'x-amz-acl': this.settings.acl } : {}),
    };
    const body = uploadBody(bytes);
    await withTimeout(
      this.client.putObject(this.access.bucket, key, body, sizeOf(bytes), headers),
      timeoutMs,
      ATTEMPT_TIMEOUT,
    ).finally(() => {
      if (!Buffer.isBuffer(body)) body.destroy();
    });
  }

  /** Deletes one object (the connection test's). */
  async remove(key: string): Promise<void> {
    await withTimeout(this.client.removeObject(this.access.bucket, key), ATTEMPT_TIMEOUT_MS, ATTEMPT_TIMEOUT);
  }

  close(): void {
    this.agent.destroy();
  }
}

/** What reaching a customer's bucket needs: the sealer that opens its secret and the address rules. */
export interface CustomerBucketPolicy {
  sealer: Sealer;
  allowPrivate: boolean;
  /** For tests: how host names resolve. */
  lookup?: LookupFn;
}

/** A storage failure as `error_details` lists it: the storage's own error code and message. */
export function storageFailure(err: unknown): ServiceError {
  const { code, name, message } = (err ?? {}) as { code?: string; name?: string; message?: string };
  const storageCode = name === ATTEMPT_TIMEOUT ? 'Timeout' : (code ?? name ?? 'Error');
  const text = name === ATTEMPT_TIMEOUT ? 'the storage did not answer in time' : String(message ?? 'the upload failed');
  return new ServiceError(
    'storage_upload_failed',
    { error_details: [{ parameter: 'store', code: storageCode, message: text }] },
    { cause: err },
  );
}

/**
 * Opens a bucket's keys and checks its endpoint's address, then hands the reachable bucket to
 * `use`; an address the rules refuse, or keys that cannot be opened, is storage_upload_failed.
 */
export async function withCustomerBucket<T>(
  access: BucketAccess,
  settings: ObjectSettings,
  policy: CustomerBucketPolicy,
  use: (bucket: CustomerBucket) => Promise<T>,
): Promise<T> {
  let secret: string;
  try {
    secret = policy.sealer.open(access.secret_access_key);
  } catch (err) {
    throw storageFailure(
      Object.assign(new Error('the storage keys could not be opened: this process has another SECRETS_KEY'), {
        code: 'SealedKeyUnavailable',
        cause: err,
      }),
    );
  }
  let address: string;
  try {
    address = await resolvePublic(new URL(access.endpoint).hostname, {
      allowPrivate: policy.allowPrivate,
      lookup: policy.lookup,
      param: 'storage_endpoint',
    });
  } catch (err) {
    const refusedAddress = err instanceof ServiceError && err.code === 'url_not_allowed';
    const message = refusedAddress
      ? String((err.details.error_details as { message: string }[])[0]?.message)
      : "the storage endpoint's host name does not resolve";
    throw storageFailure(
      Object.assign(new Error(message), { code: refusedAddress ? 'AddressNotAllowed' : 'NameNotResolved', cause: err }),
    );
  }
  let bucket: CustomerBucket;
  try {
    bucket = new CustomerBucket({ ...access, secret_access_key: secret }, address, settings);
  } catch (err) {
    // The client refuses an endpoint it cannot address: the customer's answer, never a 500.
    throw storageFailure(err);
  }
  try {
    return await use(bucket);
  } finally {
    bucket.close();
  }
}

/**
 * Uploads a render's output to the bucket `target` names. A failure that says the storage is
 * failing or out of reach for now (5xx, network) is tried again with backoff until `until`;
 * any other, or the last, is thrown as storage_upload_failed with the storage's own error.
 * No attempt outlives `deadline` (a waiting caller's), when there is one.
 */
export async function uploadOutput(
  target: StoreTarget,
  bytes: OutputBytes,
  format: OutputFormat,
  policy: CustomerBucketPolicy & { until: number; deadline?: number; signal?: AbortSignal },
): Promise<StoreResult> {
  const settings: ObjectSettings = { acl: target.acl, storageClass: target.storage_class };
  await withCustomerBucket(target, settings, policy, (bucket) =>
    retryWhile(
      () =>
        bucket.put(target.key, bytes, format, attemptTimeout(policy.deadline, Buffer.isBuffer(bytes) ? 0 : bytes.size)),
      isStorageTransient,
      policy.until,
      policy.signal,
    ).catch((err) => {
      throw storageFailure(err);
    }),
  );
  return {
    bucket: target.bucket,
    key: target.key,
    ...(target.return_location ? { location: objectLocation(target.endpoint, target.bucket, target.key) } : {}),
  };
}

/** How long the next attempt may take: a minute (and a file's time to go up, `streamed` bytes), or what is left before `deadline`. */
function attemptTimeout(deadline: number | undefined, streamed: number): number {
  const limit = ATTEMPT_TIMEOUT_MS + streamed / SLOWEST_UPLOAD_BYTES_PER_MS;
  return deadline === undefined ? limit : Math.max(1, Math.min(limit, deadline - Date.now()));
}

/** True when an upload failed for a reason that may pass: the storage's 5xx, the network, no answer. */
export function isStorageTransient(err: unknown): boolean {
  return (err as { name?: string })?.name === ATTEMPT_TIMEOUT || isStoreUnavailable(err);
}
