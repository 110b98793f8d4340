// The customer's own bucket (docs/storage.md): where a render's output is also uploaded, and what the
// answers say about it. Secrets here are always sealed (src/secrets/sealer.ts); nothing in this
// vocabulary ever holds one in plain text.
import type { OutputFormat } from './options.ts';
import { formatTable } from './formats.ts';

/** S3 storage classes as `storage_class` names them, and as `x-amz-storage-class` sends them. */
export const storageClasses = {
  standard: 'STANDARD',
  reduced_redundancy: 'REDUCED_REDUNDANCY',
  standard_ia: 'STANDARD_IA',
  onezone_ia: 'ONEZONE_IA',
  intelligent_tiering: 'INTELLIGENT_TIERING',
  glacier: 'GLACIER',
  deep_archive: 'DEEP_ARCHIVE',
  outposts: 'OUTPOSTS',
  glacier_ir: 'GLACIER_IR',
} as const;
export type StorageClass = keyof typeof storageClasses;

/** A bucket and the keys that may write to it; the secret sealed. */
export interface BucketAccess {
  /** Absolute http(s) URL of the S3-compatible service. */
  endpoint: string;
  bucket: string;
  region: string;
  access_key_id: string;
  /** Sealed (`sealed:v1:…`): opened only by the process that uploads, for the upload. */
  secret_access_key: string;
}

/** A workspace's default storage, as the workspace record keeps it. */
export interface DefaultStorage extends BucketAccess {
  updated_at: string;
}

/** One upload a render request asks for: into which bucket, under which key, how. */
export interface StoreTarget extends BucketAccess {
  /** The object key: `storage_path` with the format's extension. */
  key: string;
  acl: '' | 'public-read';
  storage_class: StorageClass;
  return_location: boolean;
}

/** Where an upload went, as answers, the status and webhooks say it. */
export interface StoreResult {
  bucket: string;
  key: string;
  /** The object's URL, when `storage_return_location` asked for it. */
  location?: string;
}

/**
 * The region S3-compatible services that sign with their own region name in their endpoint:
 * Amazon S3 (`s3.eu-west-1.amazonaws.com`, `s3-eu-west-1…`, dual-stack and FIPS), Wasabi
 * (`s3.eu-central-1.wasabisys.com`), Backblaze B2 (`s3.us-west-004.backblazeb2.com`) and Scaleway
 * (`s3.fr-par.scw.cloud`); else `fallback`, which MinIO and R2 take.
 */
const regionalEndpoints = [
  /(?:^|\.)s3(?:-fips)?(?:\.dualstack)?[.-]([a-z]{2}(?:-[a-z]+)+-\d)\.amazonaws\.com$/,
  /(?:^|\.)s3\.([a-z]{2}(?:-[a-z]+)+-\d)\.wasabisys\.com$/,
  /(?:^|\.)s3\.([a-z]{2}-[a-z]+-\d{3})\.backblazeb2\.com$/,
  /(?:^|\.)s3\.([a-z]{2}-[a-z]{3})\.scw\.cloud$/,
];

/** The region an endpoint names (see regionalEndpoints), else `fallback`. */
export function regionOf(endpoint: string, fallback = 'us-east-1'): string {
  const host = new URL(endpoint).hostname;
  for (const pattern of regionalEndpoints) {
    const region = pattern.exec(host)?.[1];
    if (region) return region;
  }
  return fallback;
}

/**
 * The object key of `storage_path` for a format: its extension appended unless the path already
 * ends with it, or with the format's name as a request may give it (`.jpeg`, `.markdown`).
 */
export function objectKeyOf(storagePath: string, format: OutputFormat): string {
  const facts: { extension: string; aliases?: readonly string[] } = formatTable[format];
  const endings = [facts.extension, format, ...(facts.aliases ?? [])].map((name) => `.${name}`);
  const path = storagePath.toLowerCase();
  return endings.some((ending) => path.endsWith(ending)) ? storagePath : `${storagePath}.${facts.extension}`;
}

/**
 * The key of a file stored beside the output (save_formats): the output's key with `format`'s
 * extension in place of the output's (`shots/home.png` → `shots/home.html`).
 */
export function siblingKeyOf(key: string, outputFormat: OutputFormat, format: OutputFormat): string {
  const ending = `.${formatTable[outputFormat].extension}`;
  const base = key.endsWith(ending) ? key.slice(0, -ending.length) : key;
  return `${base}.${formatTable[format].extension}`;
}

/** The longest object key S3 takes, in bytes of UTF-8. */
export const MAX_OBJECT_KEY_BYTES = 1024;

/** What is wrong with a `storage_path`, or undefined when it is a usable key. */
export function storagePathProblem(path: string): string | undefined {
  if (path.startsWith('/')) return 'must not start with /';
  // Control characters have no place in a key, and some stores mangle them.
  if (/[\x00-\x1f\x7f]/.test(path)) return 'must not contain control characters';
  const segments = path.split('/');
  if (segments.some((segment) => segment === '.' || segment === '..')) return 'must not contain . or .. segments';
  if (segments.some((segment) => segment === '')) return 'must not contain empty segments (//) or end with /';
  return undefined;
}

/**
 * What is wrong with a storage endpoint, or undefined: the service's origin alone. A scheme other
 * than http(s) is left to the address rules, which refuse it as they refuse it for `url`.
 */
export function storageEndpointProblem(raw: string): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute http(s) URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  if (url.pathname !== '/' || url.search || url.hash)
    return "must be the service's address alone (scheme, host and port): the bucket goes in storage_bucket";
  return undefined;
}

/** A bucket name S3 accepts: 3–63 lowercase letters, digits, dots and dashes. */
export const bucketNamePattern = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

/** The object's URL: path-style under the endpoint, each key segment encoded. */
export function objectLocation(endpoint: string, bucket: string, key: string): string {
  const base = endpoint.replace(/\/+$/, '');
  return `${base}/${bucket}/${key.split('/').map(encodeURIComponent).join('/')}`;
}

/** The storage_* parameters of one request, as parsed. */
export interface StorageParameters {
  storage_path?: string;
  storage_endpoint?: string;
  storage_bucket?: string;
  storage_access_key_id?: string;
  storage_secret_access_key?: string;
  storage_acl: '' | 'public-read';
  storage_class: StorageClass;
  storage_return_location: boolean;
}

/** A parameter missing for an upload, named as `error_details` lists it. */
export interface MissingStorage {
  parameter: string;
  message: string;
}

/**
 * The upload a request asks for: each storage_* given overrides the workspace's default. The
 * default's keys go only to the default's endpoint; a request naming another endpoint brings its
 * own keys. `seal` seals a secret that came with the request. Returns what is missing instead
 * when neither the request nor the default gives it.
 */
export function storeTargetOf(
  given: StorageParameters,
  fallback: DefaultStorage | undefined,
  format: OutputFormat,
  seal: (secret: string) => string,
): { target: StoreTarget } | { missing: MissingStorage[] } {
  const endpoint = given.storage_endpoint ?? fallback?.endpoint;
  const bucket = given.storage_bucket ?? fallback?.bucket;
  const ownKeys = given.storage_access_key_id !== undefined && given.storage_secret_access_key !== undefined;
  // Endpoints are origins (storageEndpointProblem): `https://s3.example/` is `https://s3.example`.
  const defaultKeys =
    fallback !== undefined && endpoint !== undefined && new URL(endpoint).origin === new URL(fallback.endpoint).origin;
  const missing: MissingStorage[] = [];
  const why = fallback ? '' : ' (the workspace has no default storage)';
  if (!endpoint) missing.push({ parameter: 'storage_endpoint', message: `is required with store=true${why}` });
  if (!bucket) missing.push({ parameter: 'storage_bucket', message: `is required with store=true${why}` });
  if (!ownKeys && !defaultKeys) {
    const message = fallback
      ? "are required: storage_endpoint is not the workspace's default storage, whose keys stay with it"
      : `are required with store=true${why}`;
    missing.push({ parameter: 'storage_access_key_id', message }, { parameter: 'storage_secret_access_key', message });
  }
  if (missing.length > 0 || !endpoint || !bucket) return { missing };
  return {
    target: {
      endpoint,
      bucket,
      region: defaultKeys && fallback ? fallback.region : regionOf(endpoint),
      access_key_id: ownKeys ? given.storage_access_key_id! : fallback!.access_key_id,
      secret_access_key: ownKeys ? seal(given.storage_secret_access_key!) : fallback!.secret_access_key,
      key: objectKeyOf(given.storage_path!, format),
      acl: given.storage_acl,
      storage_class: given.storage_class,
      return_location: given.storage_return_location,
    },
  };
}
