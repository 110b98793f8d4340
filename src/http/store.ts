// The customer's bucket as every render route sees it (docs/storage.md): the upload a request asks
// for, its secret sealed before it leaves the ingress, and the headers that say where it went.
import { ServiceError } from '../errors.ts';
import type { OutputFormat } from '../domain/options.ts';
import { storeTargetOf, type StorageParameters, type StoreResult, type StoreTarget } from '../domain/storage.ts';
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
  return resolved.target;
}

/** The headers that say where an upload went: ours, and the names ScreenshotOne's SDK reads. */
export function storeHeaders(store: StoreResult): Record<string, string> {
  return {
    'X-Store-Bucket': store.bucket,
    'X-Store-Key': store.key,
    'X-ScreenshotOne-Store-Bucket': store.bucket,
    'X-ScreenshotOne-Store-Key': store.key,
  };
}
