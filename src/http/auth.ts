// Who is asking: the access key, the email rule and the signature, checked in the documented order.
import type { FastifyRequest } from 'fastify';
import { ServiceError } from '../errors.ts';
import { scopedPayload, signatureMatches, splitSignedQuery } from '../signing.ts';
import type { WorkspaceCache } from '../workspaces/cache.ts';
import { keysUsable, type Workspace } from '../workspaces/workspace.ts';
import type { RawParams } from './params.ts';

/** The raw query string exactly as sent, without the leading `?` (signatures are over it). */
export function rawQueryString(request: FastifyRequest): string {
  const url = request.raw.url ?? '';
  const at = url.indexOf('?');
  return at === -1 ? '' : url.slice(at + 1);
}

/** The access key from the X-Access-Key header, else the query string, else the JSON body. */
export function accessKeyOf(request: FastifyRequest, raw?: RawParams): string | undefined {
  const header = request.headers['x-access-key'];
  if (typeof header === 'string' && header !== '') return header;
  // A GET's query is already parsed into `raw`: its first access_key, as URLSearchParams.get gives.
  const fromQuery =
    raw?.kind === 'query'
      ? raw.entries.find(([name]) => name === 'access_key')?.[1]
      : new URLSearchParams(rawQueryString(request)).get('access_key');
  if (fromQuery) return fromQuery;
  const fromBody = raw?.kind === 'json' ? raw.body.access_key : undefined;
  return typeof fromBody === 'string' && fromBody !== '' ? fromBody : undefined;
}

/** The workspace of a valid access key, or 401. */
export async function identify(request: FastifyRequest, cache: WorkspaceCache, raw?: RawParams): Promise<Workspace> {
  const accessKey = accessKeyOf(request, raw);
  const workspace = accessKey ? await cache.byAccessKey(accessKey) : null;
  if (!workspace) throw new ServiceError('access_key_invalid');
  return workspace;
}

/** An authenticated /api/take caller. */
export interface Caller {
  workspace: Workspace;
  /** For a signed GET: the raw query string that was signed (the cache key is derived from it). */
  signedQuery?: string;
  /** For a GET without a signature: its raw query string (cached only with cache=true). */
  unsignedQuery?: string;
}

/**
 * What a signature signs (docs/api.md, "Signatures"). `query`: ScreenshotOne's scheme, the raw
 * query string (GET) or raw body (POST) alone, for `/api/take` and `/api/animate` only. `request`:
 * every other endpoint, where the method and path are signed too, so that a signature is valid for
 * the one endpoint and method it was made for.
 */
export type SignatureScope = 'query' | 'request';

/** The raw path exactly as sent, without the query string. */
function rawPath(request: FastifyRequest): string {
  const url = request.raw.url ?? '';
  const at = url.indexOf('?');
  return at === -1 ? url : url.slice(0, at);
}

/** What is signed: the payload alone (`query` scope), or `METHOD /path` + a newline + the payload. */
function signedPayload(request: FastifyRequest, scope: SignatureScope, payload: string | Uint8Array) {
  return scope === 'query' ? payload : scopedPayload(request.method, rawPath(request), payload);
}

/**
 * Runs the checks of docs/api.md up to the parameters: access key (401), email verification (403),
 * a sent signature that does not match (403), a required signature that was not sent (403).
 */
export async function authenticate(
  request: FastifyRequest,
  raw: RawParams,
  cache: WorkspaceCache,
  scope: SignatureScope = 'request',
): Promise<Caller> {
  const workspace = await identify(request, cache, raw);
  if (!keysUsable(workspace)) throw new ServiceError('email_not_verified');

  let signed = false;
  let signedQuery: string | undefined;
  // A POST or PATCH (/api/monitors) signs its body; anything else its query string.
  if (request.method !== 'POST' && request.method !== 'PATCH') {
    const split = splitSignedQuery(rawQueryString(request));
    if (split === 'misplaced') {
      throw new ServiceError(
        'signature_is_not_valid',
        {},
        { message: 'The signature must be the last parameter of the query string.' },
      );
    }
    if (split === 'encoded') {
      throw new ServiceError(
        'signature_is_not_valid',
        {},
        { message: "The signature parameter's name must be sent as is, not percent-encoded." },
      );
    }
    if (split !== 'absent') {
      if (!signatureMatches(workspace.secret_key, signedPayload(request, scope, split.signed), split.signature))
        throw new ServiceError('signature_is_not_valid');
      signed = true;
      signedQuery = split.signed;
    }
  } else {
    const header = request.headers['x-signature'];
    if (header !== undefined) {
      const presented = Array.isArray(header) ? '' : header;
      const body = request.rawBody ?? new Uint8Array();
      if (!signatureMatches(workspace.secret_key, signedPayload(request, scope, body), presented)) {
        throw new ServiceError('signature_is_not_valid');
      }
      signed = true;
    }
  }
  if (!signed && workspace.require_signed_requests) throw new ServiceError('signature_is_required');
  if (signedQuery !== undefined) return { workspace, signedQuery };
  return request.method === 'GET' ? { workspace, unsignedQuery: rawQueryString(request) } : { workspace };
}
