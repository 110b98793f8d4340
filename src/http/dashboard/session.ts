// Dashboard sessions: a signed HttpOnly SameSite=Lax cookie, the secret that signs it, and CSRF tokens derived from it.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { KV } from '@nats-io/kv';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { createJson, readJson, updateJson } from '../../jetstream/kv-json.ts';
import { open, seal, type TokenBody } from './tokens.ts';
import { Sealer } from '../../secrets/sealer.ts';

/** What the session cookie holds; every visitor gets one (for CSRF), signed-in ones carry an email. */
export interface Session extends TokenBody {
  purpose: 'session';
  /** Random per session: the CSRF token is derived from it. */
  sid: string;
  email?: string;
  /** The workspace the member is looking at. */
  ws?: string;
}

/** Name of the session cookie. */
export const SESSION_COOKIE = 'sb_session';
const SESSION_LIFETIME_MS = 14 * 24 * 3600 * 1000;

/** SESSION_SECRET when configured; otherwise the one in KV (sealed), created by whichever ingress came first. */
export async function resolveSessionSecret(configured: string | undefined, bucket: KV, sealer: Sealer): Promise<string> {
  if (configured) return configured;
  // create() only succeeds for the first writer, so every ingress ends up reading the same secret.
  await createJson(bucket, 'session_secret', sealer.seal(randomBytes(32).toString('base64url')));
  const { value } = await readJson<string>(bucket, 'session_secret');
  if (!value) throw new Error('session secret missing from the dashboard bucket');
  // One written before secrets were sealed is used as it is until `shutterbus secrets reseal`.
  return Sealer.isSealed(value) ? sealer.open(value) : value;
}

/** Seals the generated session secret under the current SECRETS_KEY if it is not already; true when it changed. */
export async function resealSessionSecret(bucket: KV, sealer: Sealer): Promise<boolean> {
  const { changed } = await updateJson<string>(bucket, 'session_secret', (stored) => {
    if (stored === null || (Sealer.isSealed(stored) && !sealer.isStale(stored))) return undefined;
    return sealer.seal(Sealer.isSealed(stored) ? sealer.open(stored) : stored);
  });
  return changed;
}

/** The value of one cookie of the request. */
export function cookieOf(request: FastifyRequest, name: string): string | undefined {
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at !== -1 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return undefined;
}

/** Reads and writes session cookies and checks CSRF tokens. */
export class Sessions {
  constructor(
    private readonly secret: string,
    private readonly secure: boolean,
  ) {}

  /** The request's valid session, or null. */
  read(request: FastifyRequest): Session | null {
    return open<Session>(this.secret, 'session', cookieOf(request, SESSION_COOKIE));
  }

  /** Sets the cookie for `session` (a fresh sid and expiry unless given) and returns it. */
  write(reply: FastifyReply, fields: Partial<Pick<Session, 'sid' | 'email' | 'ws'>>): Session {
    const session: Session = { purpose: 'session', sid: fields.sid ?? randomBytes(16).toString('base64url'), exp: Date.now() + SESSION_LIFETIME_MS };
    if (fields.email) session.email = fields.email;
    if (fields.ws) session.ws = fields.ws;
    const attributes = [`Path=/dashboard`, 'HttpOnly', 'SameSite=Lax', `Max-Age=${SESSION_LIFETIME_MS / 1000}`, ...(this.secure ? ['Secure'] : [])];
    reply.header('set-cookie', `${SESSION_COOKIE}=${seal(this.secret, session)}; ${attributes.join('; ')}`);
    return session;
  }

  /** The CSRF token every form of this session carries in its `_csrf` field. */
  csrfToken(session: Session): string {
    return createHmac('sha256', this.secret).update(`csrf.${session.sid}`).digest('base64url');
  }

  /** True when `presented` is this session's CSRF token. */
  csrfMatches(session: Session | null, presented: unknown): boolean {
    if (!session || typeof presented !== 'string') return false;
    const expected = Buffer.from(this.csrfToken(session));
    const given = Buffer.from(presented);
    return expected.length === given.length && timingSafeEqual(expected, given);
  }

  /** Seals a mail link token (verification, invitation) with the same secret. */
  sealLink<T extends TokenBody>(body: T): string {
    return seal(this.secret, body);
  }

  /** Opens a mail link token of `purpose`, or null. */
  openLink<T extends TokenBody>(purpose: string, token: string | undefined): T | null {
    return open<T>(this.secret, purpose, token);
  }
}

/**
 * True when a POST comes from a page of this service: its Origin (or, lacking one, its Referer)
 * must be the configured base URL's origin or the origin of the Host it was sent to.
 */
export function sameOrigin(request: FastifyRequest, baseUrl: string): boolean {
  const allowed = new Set([new URL(baseUrl).origin]);
  if (request.headers.host) allowed.add(`${new URL(baseUrl).protocol}//${request.headers.host}`);
  const origin = request.headers.origin;
  if (typeof origin === 'string' && origin !== '') return allowed.has(origin);
  const referer = request.headers.referer;
  if (typeof referer !== 'string' || referer === '') return false;
  try {
    return allowed.has(new URL(referer).origin);
  } catch {
    return false;
  }
}
