// A workspace's profiles: named browser states (cookies, local storage) a render loads to see a page
// behind a login (docs/profiles.md). Names and shapes only; the store is src/profiles/.
import { ServiceError } from '../errors.ts';

/** The 400 of a `profile` the workspace has not got (another workspace's included). */
export const unknownProfile = () =>
  new ServiceError('request_not_valid', {
    error_details: [{ parameter: 'profile', message: 'is not a profile of this workspace (POST /api/profiles)' }],
  });

/** What a profile's name may be: it is part of a KV key and of a URL path. */
export const PROFILE_NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
export const PROFILE_NAME_TEXT = 'letters, digits, _ and -, at most 64';

/** One cookie of a storage state, as Playwright's storageState() writes it. */
export interface ProfileCookie {
  name: string;
  value: string;
  domain: string;
  path: string;
  /** Unix seconds; -1 for a session cookie. */
  expires: number;
  httpOnly: boolean;
  secure: boolean;
  sameSite: 'Strict' | 'Lax' | 'None';
}

/** A browser state: Playwright's `storageState` (cookies, and each origin's local storage). */
export interface StorageState {
  cookies: ProfileCookie[];
  origins: { origin: string; localStorage: { name: string; value: string }[] }[];
}

/** A stored profile: its state sealed (src/secrets/), never shown. */
export interface ProfileRecord {
  workspace_id: string;
  name: string;
  /** The origins the state belongs to: its cookies' sites and its local storage's origins. */
  origins: string[];
  created_at: string;
  /** The StorageState as JSON, sealed. */
  sealed_state: string;
}

/** What the API shows of a profile: never its state. */
export function publicProfile(profile: ProfileRecord): { name: string; origins: string[]; created_at: string } {
  return { name: profile.name, origins: profile.origins, created_at: profile.created_at };
}

/** The KV key of a workspace's profile. */
export const profileKey = (workspaceId: string, name: string) => `${workspaceId}.${name}`;

/** The most a storage state may hold: cookies, origins, and bytes of its JSON. */
export const PROFILE_LIMITS = { cookies: 500, origins: 50, bytes: 512 * 1024 } as const;

/** The origins a state names: each cookie's site (https for a Secure cookie), then each local storage origin. */
export function originsOf(state: StorageState): string[] {
  const origins = new Set<string>();
  for (const cookie of state.cookies)
    origins.add(`${cookie.secure ? 'https' : 'http'}://${cookie.domain.replace(/^\./, '')}`);
  for (const entry of state.origins) origins.add(entry.origin);
  return [...origins];
}

/** Why `value` is not a storage state this service takes, or undefined when it is one. */
export function storageStateProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'must be an object';
  const { cookies = [], origins = [] } = value as Record<string, unknown>;
  if (!Array.isArray(cookies)) return 'cookies must be a list';
  if (!Array.isArray(origins)) return 'origins must be a list';
  if (cookies.length > PROFILE_LIMITS.cookies) return `at most ${PROFILE_LIMITS.cookies} cookies`;
  if (origins.length > PROFILE_LIMITS.origins) return `at most ${PROFILE_LIMITS.origins} origins`;
  for (const cookie of cookies) {
    if (typeof cookie !== 'object' || cookie === null) return 'each cookie must be an object';
    const { name, value: text, domain, path } = cookie as Record<string, unknown>;
    if (typeof name !== 'string' || name === '' || typeof text !== 'string')
      return 'each cookie needs a name and a value';
    if (typeof domain !== 'string' || !/^\.?[A-Za-z0-9.-]+$/.test(domain))
      return `cookie ${name}: domain is not a host`;
    if (path !== undefined && (typeof path !== 'string' || !path.startsWith('/')))
      return `cookie ${name}: path must start with /`;
    if (/[\x00-\x1f\x7f;]/.test(name + text)) return `cookie ${name}: control characters or ; in the name or value`;
  }
  for (const entry of origins) {
    if (typeof entry !== 'object' || entry === null) return 'each origin must be an object';
    const { origin, localStorage = [] } = entry as Record<string, unknown>;
    let url: URL;
    try {
      url = new URL(String(origin));
    } catch {
      return `origin ${String(origin)} is not an origin`;
    }
    if (!/^https?:$/.test(url.protocol) || url.origin !== origin)
      return `origin ${String(origin)} is not an http(s) origin`;
    if (!Array.isArray(localStorage)) return `origin ${origin}: localStorage must be a list`;
    for (const item of localStorage) {
      const { name, value: text } = (item ?? {}) as Record<string, unknown>;
      if (typeof name !== 'string' || typeof text !== 'string')
        return `origin ${origin}: each localStorage item needs a name and a value`;
    }
  }
  return undefined;
}

/** `value` (checked by storageStateProblem) in the shape a render loads: defaults filled in. */
export function normaliseState(value: Record<string, unknown>): StorageState {
  const cookies = ((value.cookies ?? []) as Record<string, unknown>[]).map(
    (cookie): ProfileCookie => ({
      name: String(cookie.name),
      value: String(cookie.value),
      domain: String(cookie.domain).toLowerCase(),
      path: typeof cookie.path === 'string' ? cookie.path : '/',
      expires: typeof cookie.expires === 'number' ? cookie.expires : -1,
      httpOnly: cookie.httpOnly === true,
      secure: cookie.secure === true,
      sameSite: cookie.sameSite === 'Strict' || cookie.sameSite === 'None' ? cookie.sameSite : 'Lax',
    }),
  );
  const origins = ((value.origins ?? []) as Record<string, unknown>[]).map((entry) => ({
    origin: String(entry.origin),
    localStorage: ((entry.localStorage ?? []) as Record<string, unknown>[]).map((item) => ({
      name: String(item.name),
      value: String(item.value),
    })),
  }));
  return { cookies, origins };
}
