// Dashboard sessions: a signed HttpOnly SameSite=Lax cookie whose signed-in sessions are also kept
// server-side (revocable), the secret that signs it, CSRF tokens derived from it, and the cookie
// that marks a browser an account signed in from.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { KV } from '@nats-io/kv';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { SessionStore } from '../../accounts/sessions.ts';
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

/** A browser an account signed in from: the sign-in limits never slow it for that account. */
interface DeviceToken extends TokenBody {
  purpose: 'device';
  email: string;
}

/** Name of the session cookie. */
export const SESSION_COOKIE = 'sb_session';
/** Name of the cookie marking a browser an account signed in from (docs/security.md). */
export const DEVICE_COOKIE = 'sb_device';
const SESSION_LIFETIME_MS = 14 * 24 * 3600 * 1000;
const DEVICE_LIFETIME_MS = 365 * 24 * 3600 * 1000;

/** SESSION_SECRET when configured; otherwise the one in KV (sealed), created by whichever ingress came first. */
export async function resolveSessionSecret(
  configured: string | undefined,
  bucket: KV,
  sealer: Sealer,
): Promise<string> {
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
    private readonly store: SessionStore,
  ) {}

  /** The request's validly signed session cookie, or null; a signed-in one may have been ended since (see `live`). */
  read(request: FastifyRequest): Session | null {
    return open<Session>(this.secret, 'session', cookieOf(request, SESSION_COOKIE));
  }

  /** The request's session if it is anonymous or still open server-side; null once signed out or revoked. */
  async live(request: FastifyRequest): Promise<Session | null> {
    const session = this.read(request);
    if (!session?.email) return session;
    return (await this.store.isOpen(session.email, session.sid)) ? session : null;
  }

  /** Signs `email` in: a new session id (one planted before sign-in is worth nothing), kept server-side, and this browser remembered. */
  async signIn(reply: FastifyReply, email: string, ws?: string): Promise<Session> {
    const sid = randomBytes(16).toString('base64url');
    await this.store.open(email, sid);
    const session = this.write(reply, { sid, email, ws });
    const device: DeviceToken = { purpose: 'device', email, exp: Date.now() + DEVICE_LIFETIME_MS };
    reply.header(
      'set-cookie',
      `${DEVICE_COOKIE}=${seal(this.secret, device)}; ${this.attributes(DEVICE_LIFETIME_MS).join('; ')}`,
    );
    return session;
  }

  /** Ends the request's session server-side and gives the browser an anonymous one. */
  async signOut(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const session = this.read(request);
    if (session?.email) await this.store.end(session.email, session.sid);
    this.write(reply, {});
  }

  /** Ends every session of `email`, but `keep` when given; returns how many ended. */
  endAll(email: string, keep?: string): Promise<number> {
    return this.store.endAll(email, keep);
  }

  /** True when this browser signed in to `email` before (its device cookie names the account). */
  knownDevice(request: FastifyRequest, email: string): boolean {
    return open<DeviceToken>(this.secret, 'device', cookieOf(request, DEVICE_COOKIE))?.email === email;
  }

  private attributes(lifetimeMs: number): string[] {
    return [
      `Path=/dashboard`,
      'HttpOnly',
      'SameSite=Lax',
      `Max-Age=${lifetimeMs / 1000}`,
      ...(this.secure ? ['Secure'] : []),
    ];
  }

  /** Sets the cookie for `session` (a fresh sid and expiry unless given) and returns it; signing in goes through `signIn`. */
  write(reply: FastifyReply, fields: Partial<Pick<Session, 'sid' | 'email' | 'ws'>>): Session {
    const session: Session = {
      purpose: 'session',
      sid: fields.sid ?? randomBytes(16).toString('base64url'),
      exp: Date.now() + SESSION_LIFETIME_MS,
    };
    if (fields.email) session.email = fields.email;
    if (fields.ws) session.ws = fields.ws;
    reply.header(
      'set-cookie',
      `${SESSION_COOKIE}=${seal(this.secret, session)}; ${this.attributes(SESSION_LIFETIME_MS).join('; ')}`,
    );
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
