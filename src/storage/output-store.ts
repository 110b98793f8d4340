// Where a render's output is written: the service's own bucket (FileStore) and a customer's
// (CustomerBucket) implement the same step, so every render path stores and uploads alike.
import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { Client } from 'minio';
import type { OutputFormat } from '../domain/options.ts';

/** An output too large to hold in memory (a recording): a file on disk, read afresh by each upload. */
export interface OutputFile {
  path: string;
  size: number;
}

/** An output's bytes: in memory, or a file on disk streamed into the store. */
export type OutputBytes = Buffer | OutputFile;

/** A place outputs are written to, one object per key, with the format's content type. */
export interface OutputStore {
  put(key: string, bytes: OutputBytes, format: OutputFormat): Promise<void>;
}

/** The size of an output in bytes. */
export function sizeOf(bytes: OutputBytes): number {
  return Buffer.isBuffer(bytes) ? bytes.length : bytes.size;
}

/**
 * What an upload sends: the buffer, or a new stream of the file (never read into memory whole:
 * the S3 client holds one part of it at a time).
 */
export function uploadBody(bytes: OutputBytes): Buffer | Readable {
  return Buffer.isBuffer(bytes) ? bytes : createReadStream(bytes.path);
}

/** Objects above this size go up in parts of this size (minio's multipart upload), one part in memory at a time. */
export const PART_SIZE = 5 * 1024 * 1024;

/** Bytes per millisecond an upload of a file is allowed at the least, on top of a call's own time limit. */
export const SLOWEST_UPLOAD_BYTES_PER_MS = 1024;

/**
 * The S3 client for uploads. A fresh upload never resumes another one: listing in-progress uploads
 * needs a permission (ListBucketMultipartUploads) a write-only key rightly lacks, and a store
 * (s3rver) that does not implement it.
 */
export class UploadClient extends Client {
  override async findUploadId(): Promise<string | undefined> {
    return undefined;
  }
}
