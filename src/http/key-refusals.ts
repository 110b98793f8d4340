// GET /api/take without an access key, or with one the workspace cache already knows is wrong:
// answered 401 at the HTTP server, before Fastify, with the bytes, metrics and access-log line
// the full path gives (a client retrying a bad key in a loop costs little more than a bare route).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { errorBody } from '../errors.ts';
import type { NatsLink } from '../jetstream/connection.ts';
import type { Logger } from '../log.ts';
import { metrics } from '../metrics.ts';
import type { WorkspaceCache } from '../workspaces/cache.ts';

const PATH = '/api/take';
const PREFIX = `${PATH}?`;
// A string body goes out in one write with the headers; Fastify's answer is the same bytes.
const BODY = JSON.stringify(errorBody('access_key_invalid'));
const HEADERS = {
  'content-type': 'application/json; charset=utf-8',
  'content-length': String(Buffer.byteLength(BODY)),
  'x-content-type-options': 'nosniff',
};
const answered = metrics.httpResponses.labels({ route: PATH, status: '401' });
const duration = metrics.httpDuration.labels({ route: PATH });

/**
 * The 401s of GET /api/take that need nothing the full checks would read anew: no key at all, or a
 * key the workspace cache holds as unknown (it forgets one as soon as the key is created anywhere).
 * Everything else, and everything while NATS is away or the server closes, falls through to Fastify.
 */
export class KeyRefusals {
  /** Set while the server shuts down: Fastify then answers 503. */
  closing = false;

  constructor(
    private readonly workspaces: WorkspaceCache,
    private readonly log: Logger,
    private readonly natsLink?: NatsLink,
  ) {}

  /** Answers `req` with the 401 and returns true, or returns false and leaves it untouched. */
  answer(req: IncomingMessage, res: ServerResponse): boolean {
    const started = performance.now();
    const url = req.url;
    if (req.method !== 'GET' || url === undefined || !(url === PATH || url.startsWith(PREFIX))) return false;
    if (this.closing || (this.natsLink && !this.natsLink.isUp)) return false;
    // The key as the full checks find it (auth.ts accessKeyOf): a non-empty header, else the query's.
    const header = req.headers['x-access-key'];
    let accessKey = typeof header === 'string' && header !== '' ? header : undefined;
    if (accessKey === undefined && url.length > PREFIX.length)
      accessKey = new URLSearchParams(url.slice(PREFIX.length)).get('access_key') || undefined;
    if (accessKey !== undefined && !this.workspaces.knownUnknown(accessKey)) return false;

    res.writeHead(401, HEADERS);
    res.end(BODY);
    const ms = performance.now() - started;
    answered.inc();
    duration.observe(ms / 1000);
    // The access line the full path writes (app.ts), from the root logger: no child per request.
    this.log.info(
      { method: 'GET', path: PATH, status: 401, ms: Math.round(ms), error_code: 'access_key_invalid' },
      'request',
    );
    return true;
  }
}
