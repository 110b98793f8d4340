// In the page, for profiles (src/render/steps/profile.ts); run in an isolated world, sharing the origin's storage.

/** One origin's local storage items, as a profile keeps them. */
export type OriginStorage = { origin: string; localStorage: { name: string; value: string }[] };

/**
 * A script for new documents: in a document of one of `origins`, each item the origin's local
 * storage does not hold yet is set, so the page reads them from its first script on; what the page
 * changes later in the render stays as it left it.
 */
export function seedLocalStorage(origins: OriginStorage[]): void {
  const entry = origins.find((candidate) => candidate.origin === location.origin);
  if (!entry) return;
  for (const { name, value } of entry.localStorage)
    if (localStorage.getItem(name) === null) localStorage.setItem(name, value);
}

/** The document's origin and its local storage items. */
export function readLocalStorage(): OriginStorage {
  const items: { name: string; value: string }[] = [];
  for (let i = 0; i < localStorage.length; i++) {
    const name = localStorage.key(i);
    if (name !== null) items.push({ name, value: localStorage.getItem(name) ?? '' });
  }
  return { origin: location.origin, localStorage: items };
}
