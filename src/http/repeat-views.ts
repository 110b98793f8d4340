// Repeat views of cached signed GETs (an embedded <img> loading again): answered from memory at the
// HTTP server, before Fastify, whenever everything the full checks would read is already at hand.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { boundedCache } from '../bounded-cache.ts';
import type { Logger } from '../log.ts';
import { metrics } from '../metrics.ts';
import type { RenderCache } from '../renders/cache.ts';
import { fileLocation } from './files.ts';
import { storeHeaders } from './store.ts';
import type { WorkspaceCache } from '../workspaces/cache.ts';
import { keysUsable } from '../workspaces/workspace.ts';

/** A signed query the full checks accepted, and what they accepted it under. */
export interface VerifiedQuery {
  /** The access key that identified the caller, and whether it came in the X-Access-Key header. */
  accessKey: string;
  viaHeader: boolean;
  workspaceId: string;
  /** The secret the signature matched: a rotation makes the entry useless. */
  secretKey: string;
  /** False for an unsigned GET with cache=true: it falls through once signatures are required. */
  signed: boolean;
  cacheKey: string;
  /** response_type=empty: a repeat view is the first view's empty answer, not a redirect (see below). */
  empty?: boolean;
  /** attachment_name: the redirect is to the file as a download under that name. */
  attachmentName?: string;
}

const PREFIX = '/api/take?';
const answered = metrics.httpResponses.labels({ route: '/api/take', status: '302' });
const answeredEmpty = metrics.httpResponses.labels({ route: '/api/take', status: '200' });
const duration = metrics.httpDuration.labels({ route: '/api/take' });

/**
 * Verified signed queries and the redirects they earn. A repeat view costs no HMAC, parsing, KV
 * read or Fastify request; anything not in memory (a lapsed workspace entry, a rotated secret,
 * an expired file, a key in a header that differs) falls through to the full checks.
 */
export class RepeatViews {
  private readonly verified = boundedCache<string, VerifiedQuery>(20_000);
  /** Set while the server shuts down: Fastify then answers 503. */
  closing = false;

  constructor(
    private readonly workspaces: WorkspaceCache,
    private readonly cache: RenderCache,
    /** Where the redirects point: FILES_BASE_URL. */
    private readonly filesBaseUrl: string,
    private readonly log: Logger,
  ) {}

  /** Records a signed GET that passed the full checks (its raw query string, signature included). */
  remember(rawQuery: string, verified: VerifiedQuery): void {
    this.verified.set(rawQuery, verified);
  }

  /** Answers `req` with a redirect (or an empty 200) and returns true, or returns false and leaves it untouched. */
  answer(req: IncomingMessage, res: ServerResponse): boolean {
    const started = performance.now();
    const url = req.url;
    if (this.closing || req.method !== 'GET' || url === undefined || !url.startsWith(PREFIX)) return false;
    const known = this.verified.get(url.slice(PREFIX.length));
    if (!known) return false;
    const header = req.headers['x-access-key'] || undefined;
    if (header !== (known.viaHeader ? known.accessKey : undefined)) return false;
    const workspace = this.workspaces.peek(known.accessKey);
    if (
      workspace?.workspace_id !== known.workspaceId ||
      workspace.secret_key !== known.secretKey ||
      !keysUsable(workspace) ||
      (!known.signed && workspace.require_signed_requests)
    )
      return false;
    const entry = this.cache.peek(known.cacheKey);
    if (!entry) return false;

    const headers = {
      ...(known.empty ? {} : { location: fileLocation(this.filesBaseUrl, entry.file_name!, known.attachmentName) }),
      'x-render-id': entry.render_id,
      'content-length': '0',
      'x-content-type-options': 'nosniff',
    };
    res.writeHead(known.empty ? 200 : 302, entry.store ? { ...headers, ...storeHeaders(entry.store) } : headers);
    res.end();
    const ms = performance.now() - started;
    (known.empty ? answeredEmpty : answered).inc();
    duration.observe(ms / 1000);
    // Counted above; logged line by line only at debug level: embeds repeat views by the thousand.
    if (this.log.isLevelEnabled('debug'))
      this.log.debug({ method: 'GET', path: '/api/take', status: 302, ms: Math.round(ms) }, 'request');
    return true;
  }
}
