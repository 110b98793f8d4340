// In the page, for the pool's wipe (src/render/pool.ts).

/** Clears the document's session storage; returns what is left in it (0 once cleared). */
export function clearSessionStorage(): number {
  sessionStorage.clear();
  return sessionStorage.length;
}

/** Forgets the name a page gave its window (window.name outlives navigations). */
export function clearWindowName(): void {
  window.name = '';
}
