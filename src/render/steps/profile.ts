// Profiles in a render (docs/profiles.md): `profile` loads a stored browser state into the warm page
// (its cookies, and its origins' local storage), undone after the render; `save_profile` reads the
// page's state once it is captured. A render naming neither makes no call here.
import type { ProfileCookie, StorageState } from '../../domain/profile.ts';
import { cdp, openCdp } from '../browser/cdp.ts';
import { inPageSource } from '../browser/in-page.ts';
import { readLocalStorage, seedLocalStorage } from '../in-page/profile.ts';
import { evaluateIsolated } from '../browser/isolated-world.ts';
import type { PageStep } from './page-step.ts';

/** What a render does with profiles: the state to load before navigating, and where to hand the state it ends with. */
export interface ProfileUse {
  load?: StorageState;
  save?: (state: StorageState) => Promise<void>;
}

/** The isolated world the local storage script runs in: never the page's own. */
const WORLD_NAME = 'shutterbus-profile';

/**
 * Loads `state` into the page before it navigates: its cookies into the context (each for its own
 * domain and path, as the browser scopes them), and a script for new documents, in an isolated
 * world, that sets each origin's local storage in that origin's documents only. The undo deletes the
 * cookies, clears those origins' local storage and ends the script's session.
 */
export async function loadProfile({ page, session, progress }: PageStep, state: StorageState): Promise<void> {
  const { Network, Storage } = cdp(session);
  progress.defer(() =>
    Promise.all([
      ...state.cookies.map((cookie) =>
        Network.deleteCookies({ name: cookie.name, domain: cookie.domain, path: cookie.path }),
      ),
      ...state.origins.map(({ origin }) => Storage.clearDataForOrigin({ origin, storageTypes: 'local_storage' })),
    ]),
  );
  if (state.cookies.length > 0) await progress.race(Network.setCookies({ cookies: state.cookies.map(cookieParam) }));
  if (state.origins.length === 0) return;
  // A session of its own, whose script ends with it; scripts for new documents run in an isolated
  // world only on a session with the Page domain on.
  const scripts = await progress.race(openCdp(page));
  progress.defer(() => scripts.detach());
  await progress.race(scripts.Page.enable());
  await progress.race(
    scripts.Page.addScriptToEvaluateOnNewDocument({
      source: inPageSource(seedLocalStorage, state.origins),
      worldName: WORLD_NAME,
    }),
  );
}

/** The page's state once it is captured: every cookie of its context, and its document origin's local storage. */
export async function readProfile({ session, progress }: PageStep): Promise<StorageState> {
  const { cookies } = await progress.race(cdp(session).Network.getAllCookies());
  const storage = await progress.race(evaluateIsolated(session, readLocalStorage, []));
  const origins = isOriginStorage(storage) && storage.localStorage.length > 0 ? [storage] : [];
  return {
    cookies: cookies.map(
      (cookie): ProfileCookie => ({
        name: cookie.name,
        value: cookie.value,
        domain: cookie.domain,
        path: cookie.path,
        expires: cookie.session ? -1 : cookie.expires,
        httpOnly: cookie.httpOnly,
        secure: cookie.secure,
        sameSite: cookie.sameSite ?? 'Lax',
      }),
    ),
    origins,
  };
}

// What the page answered is believed only in the shape a profile keeps, and only for a web origin.
function isOriginStorage(value: unknown): value is StorageState['origins'][number] {
  if (typeof value !== 'object' || value === null) return false;
  const { origin, localStorage } = value as Record<string, unknown>;
  return (
    typeof origin === 'string' &&
    /^https?:\/\//.test(origin) &&
    Array.isArray(localStorage) &&
    localStorage.every(
      (item) =>
        typeof item === 'object' &&
        item !== null &&
        typeof (item as Record<string, unknown>).name === 'string' &&
        typeof (item as Record<string, unknown>).value === 'string',
    )
  );
}

// The CDP form of a profile's cookie: a session cookie has no expiry.
function cookieParam(cookie: ProfileCookie) {
  return {
    name: cookie.name,
    value: cookie.value,
    domain: cookie.domain,
    path: cookie.path,
    secure: cookie.secure,
    httpOnly: cookie.httpOnly,
    sameSite: cookie.sameSite,
    ...(cookie.expires > 0 ? { expires: cookie.expires } : {}),
  };
}
