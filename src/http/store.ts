// The customer's bucket as every render route sees it (docs/storage.md): the upload a request asks
// for, its secret sealed before it leaves the ingress, and the headers that say where it went.
import { ServiceError } from '../errors.ts';
import type { OutputFormat } from '../domain/options.ts';
import {
  MAX_OBJECT_KEY_BYTES,
  storeTargetOf,
  type StorageParameters,
  type StoreResult,
  type StoreTarget,
} from '../domain/storage.ts';
import type { Sealer } from '../secrets/sealer.ts';
import type { Workspace } from '../workspaces/workspace.ts';

/**
 * The upload a request with `store` asks for, its secret sealed, or undefined without `store`;
 * `400 request_not_valid` naming what neither the request nor the workspace's default gives.
 */
export function storeTargetFor(
  control: StorageParameters & { store: boolean },
  format: OutputFormat,
  workspace: Workspace,
  sealer: Sealer | undefined,
): StoreTarget | undefined {
  if (!control.store) return undefined;
  if (!sealer)
    throw new ServiceError(
      'temporary_unavailable',
      {},
      { message: 'Uploads to your storage are not available on this server.' },
    );
  const resolved = storeTargetOf(control, workspace.storage, format, (secret) => sealer.seal(secret));
  if ('missing' in resolved) throw new ServiceError('request_not_valid', { error_details: resolved.missing });
  // Refused here, not by the storage after the render: S3 takes no longer key.
  if (Buffer.byteLength(resolved.target.key) > MAX_OBJECT_KEY_BYTES)
    throw new ServiceError('request_not_valid', {
      error_details: [
        {
          parameter: 'storage_path',
          message: `with its extension must be at most ${MAX_OBJECT_KEY_BYTES} bytes of UTF-8 (${resolved.target.key.length} characters give ${Buffer.byteLength(resolved.target.key)})`,
        },
      ],
    });
  return resolved.target;
}

/**
 * A key as a header value: as it is when it is printable ASCII, else each segment percent-encoded
 * (UTF-8), since a header cannot carry other characters; the JSON answers carry it as it is.
 */
export function headerKey(key: string): string {
  return /^[\x20-\x7e]*$/.test(key) ? key : key.split('/').map(encodeURIComponent).join('/');
}

/** The headers that say where an upload went: ours, and the names ScreenshotOne's SDK reads. */
export function storeHeaders(store: StoreResult): Record<string, string> {
  const key = headerKey(store.key);
  return {
    'X-Store-Bucket': store.bucket,
    'X-Store-Key': key,
    'X-ScreenshotOne-Store-Bucket': store.bucket,
    'X-ScreenshotOne-Store-Key': key,
  };
}
