// A workspace's default storage (docs/storage.md): the bucket store=true uploads to when a request
// names none of its own. Owners and admins set it (CLI and dashboard); the secret is sealed before
// it is written and never shown again.
import { randomBytes } from 'node:crypto';
import { ServiceError } from '../errors.ts';
import { bucketNamePattern, regionOf, storageEndpointProblem, type DefaultStorage } from '../domain/storage.ts';
import { storageFailure, withCustomerBucket, type CustomerBucketPolicy } from '../storage/customer-bucket.ts';
import type { Sealer } from '../secrets/sealer.ts';
import { canManage, type Workspace, type WorkspaceStore } from './workspace.ts';

/** What an owner or admin gives to set the default storage. */
export interface DefaultStorageInput {
  endpoint: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  region?: string;
}

/** What may be shown of a default storage: everything but the secret. */
export type PublicStorage = Omit<DefaultStorage, 'secret_access_key'>;

/** The shown part of a workspace's default storage, or null when it has none. */
export function describeStorage(workspace: Workspace): PublicStorage | null {
  if (!workspace.storage) return null;
  const { secret_access_key: _secret, ...shown } = workspace.storage;
  return shown;
}

/** The problems of an input, each naming its field ('endpoint', 'bucket', …); empty when none. */
export function storageInputProblems(input: DefaultStorageInput): { parameter: string; message: string }[] {
  const problems: { parameter: string; message: string }[] = [];
  let url: URL | undefined;
  try {
    url = new URL(input.endpoint);
  } catch {
    problems.push({ parameter: 'endpoint', message: 'must be an absolute http(s) URL' });
  }
  if (url && url.protocol !== 'http:' && url.protocol !== 'https:')
    problems.push({ parameter: 'endpoint', message: 'must use http or https' });
  if (url && (url.username || url.password))
    problems.push({ parameter: 'endpoint', message: 'must not contain a user name or password' });
  const endpoint = url ? storageEndpointProblem(input.endpoint) : undefined;
  if (endpoint) problems.push({ parameter: 'endpoint', message: endpoint });
  if (!bucketNamePattern.test(input.bucket))
    problems.push({
      parameter: 'bucket',
      message: 'must be an S3 bucket name (3–63 lowercase letters, digits, dots and dashes)',
    });
  if (!input.accessKeyId || input.accessKeyId.length > 256)
    problems.push({ parameter: 'access-key-id', message: 'is required (at most 256 characters)' });
  if (!input.secretAccessKey || input.secretAccessKey.length > 256)
    problems.push({ parameter: 'secret-access-key', message: 'is required (at most 256 characters)' });
  if (input.region !== undefined && !/^[a-z0-9-]{1,32}$/.test(input.region))
    problems.push({ parameter: 'region', message: 'must be a region name such as us-east-1' });
  return problems;
}

/** The record of an input: its secret sealed, its region given or read from the endpoint. */
export function defaultStorageOf(input: DefaultStorageInput, sealer: Sealer): DefaultStorage {
  const endpoint = input.endpoint.replace(/\/+$/, '');
  return {
    endpoint,
    bucket: input.bucket,
    region: input.region ?? regionOf(endpoint),
    access_key_id: input.accessKeyId,
    secret_access_key: sealer.seal(input.secretAccessKey),
    updated_at: new Date().toISOString(),
  };
}

/** Sets (or, with null, clears) a workspace's default storage; `forbidden` unless `asEmail` manages it. */
export async function changeDefaultStorage(
  workspaces: WorkspaceStore,
  workspaceId: string,
  asEmail: string,
  storage: DefaultStorage | null,
): Promise<Workspace> {
  // The role is checked inside the compare-and-set, against the workspace as it is at that moment.
  return workspaces.update(workspaceId, (current) => {
    if (!canManage(current, asEmail)) throw new ServiceError('forbidden');
    const { storage: _previous, ...rest } = current;
    return storage ? { ...rest, storage } : rest;
  });
}

/**
 * Writes a small object to the storage and deletes it again: the keys, the bucket and the address
 * all work. Throws storage_upload_failed with the storage's own error otherwise.
 */
export async function testStorage(storage: DefaultStorage, policy: CustomerBucketPolicy): Promise<{ key: string }> {
  const key = `shutterbus-connection-test-${randomBytes(8).toString('hex')}.md`;
  await withCustomerBucket(storage, { acl: '', storageClass: 'standard' }, policy, async (bucket) => {
    try {
      await bucket.put(
        key,
        Buffer.from('Shutterbus connection test: this object is deleted right after it is written.\n'),
        'markdown',
      );
      await bucket.remove(key);
    } catch (err) {
      throw storageFailure(err);
    }
  });
  return { key };
}
