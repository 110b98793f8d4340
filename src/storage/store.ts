// The object store (S3 / MinIO): rendered files under unguessable keys, served through the ingress.
import type { Readable } from 'node:stream';
import type { Config } from '../config.ts';
import { withTimeout } from '../retry.ts';
import { dayOf } from '../domain/files.ts';
import { contentTypes, type OutputFormat } from '../domain/options.ts';
import {
  PART_SIZE,
  SLOWEST_UPLOAD_BYTES_PER_MS,
  sizeOf,
  uploadBody,
  type OutputBytes,
  type OutputStore,
  UploadClient,
} from './output-store.ts';

/** A stored file's metadata as the files route needs it. */
export interface StoredFile {
  size: number;
  etag: string;
  contentType: string;
}

/** Rendered images in one bucket. */
export class FileStore implements OutputStore {
  private readonly client: UploadClient;

  constructor(private readonly s3: Config['s3']) {
    const endpoint = new URL(s3.endPoint);
    this.client = new UploadClient({
      endPoint: endpoint.hostname,
      port: endpoint.port ? Number(endpoint.port) : undefined,
      useSSL: endpoint.protocol === 'https:',
      accessKey: s3.accessKey,
      secretKey: s3.secretKey,
      // A region set here spares the client a network call to discover it.
      region: s3.region,
      pathStyle: true,
      // A file streamed in (a recording) goes up in parts of this size, one in memory at a time.
      partSize: PART_SIZE,
    });
  }

  /** Creates the bucket unless it exists. */
  async ensureBucket(): Promise<void> {
    if (!(await this.client.bucketExists(this.s3.bucket))) {
      await this.client.makeBucket(this.s3.bucket, this.s3.region).catch((err) => {
        if (!/BucketAlreadyOwnedByYou|BucketAlreadyExists/.test(String(err?.code))) throw err;
      });
    }
  }

  /**
   * Stores an output under `fileName`, from memory or streamed from its file on disk; a store that
   * does not answer within STORE_TIMEOUT_MS (and a file's time to go up) fails it.
   */
  async put(fileName: string, bytes: OutputBytes, format: OutputFormat): Promise<void> {
    const body = uploadBody(bytes);
    const size = sizeOf(bytes);
    const put = this.client.putObject(this.s3.bucket, objectKey(fileName), body, size, {
      'Content-Type': contentTypes[format],
    });
    const limit = STORE_TIMEOUT_MS + (Buffer.isBuffer(bytes) ? 0 : size / SLOWEST_UPLOAD_BYTES_PER_MS);
    await withTimeout(put, limit, STORE_TIMEOUT).finally(() => {
      if (!Buffer.isBuffer(body)) body.destroy();
    });
  }

  /** Metadata of a stored file, or null when there is none. */
  async stat(fileName: string): Promise<StoredFile | null> {
    try {
      const stat = await this.client.statObject(this.s3.bucket, objectKey(fileName));
      const contentType = stat.metaData?.['content-type'] ?? 'application/octet-stream';
      return { size: stat.size, etag: stat.etag, contentType };
    } catch (err) {
      if (isMissing(err)) return null;
      throw err;
    }
  }

  /** The bytes of a stored file as a stream. */
  async open(fileName: string): Promise<Readable> {
    return this.client.getObject(this.s3.bucket, objectKey(fileName));
  }

  /** The whole file in memory: images are small and the sync answer needs its length. */
  async read(fileName: string): Promise<Buffer> {
    const chunks: Buffer[] = [];
    for await (const chunk of await this.open(fileName)) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  }

  /** Deletes every file whose expiry day is before `now`'s; returns how many went. */
  async sweep(now: Date): Promise<number> {
    const today = dayOf(now);
    let removed = 0;
    for await (const item of this.client.listObjectsV2(this.s3.bucket, 'files/', false)) {
      const day = /^files\/(\d{8})\/$/.exec((item as { prefix?: string }).prefix ?? '')?.[1];
      if (!day || day >= today) continue;
      const names: string[] = [];
      for await (const file of this.client.listObjectsV2(this.s3.bucket, `files/${day}/`, true)) {
        if ((file as { name?: string }).name) names.push((file as { name: string }).name);
      }
      for (let at = 0; at < names.length; at += 1000)
        await this.client.removeObjects(this.s3.bucket, names.slice(at, at + 1000));
      removed += names.length;
    }
    return removed;
  }

  /** Answers when the bucket is reachable (readiness). */
  async ping(): Promise<void> {
    await withTimeout(this.client.bucketExists(this.s3.bucket), STORE_TIMEOUT_MS, STORE_TIMEOUT);
  }
}

/** How long one call may wait for the store: the minio client has no time-out of its own. */
const STORE_TIMEOUT_MS = 10_000;
const STORE_TIMEOUT = 'StoreTimeoutError';

/** Failures that say the store is out of reach or failing for now, not that the request is wrong. */
const storeDownCodes = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'InternalError',
  'ServiceUnavailable',
  'SlowDown',
  'RequestTimeout',
  'XMinioServerNotInitialized',
]);

/** True when a failure of the store is an outage (retry later), not an answer. */
export function isStoreUnavailable(err: unknown): boolean {
  const { code, name, message } = (err ?? {}) as { code?: string; name?: string; message?: string };
  return name === STORE_TIMEOUT || storeDownCodes.has(String(code)) || /socket hang up/i.test(String(message));
}

// Objects sit under their expiry day, so the sweeper lists days, not every file.
function objectKey(fileName: string): string {
  return `files/${fileName.slice(0, 8)}/${fileName}`;
}

function isMissing(err: unknown): boolean {
  const code = (err as { code?: string })?.code;
  return code === 'NotFound' || code === 'NoSuchKey';
}
