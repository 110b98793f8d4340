// Fair shares of a process's delivery slots: a workspace, and a destination, may hold at most its
// share of the slots at once, so that slow or failing receivers of one never hold up another's
// webhooks (docs/security.md, "Cost budgets and fair shares").

/** One claim on the shares: released once the attempt is over. */
export interface ShareClaim {
  release(): void;
}

/**
 * Counts the attempts in flight per key of each kind (a workspace, a destination) and lets one more
 * start only while every key it names is under its share: the slots less `reserve`, split between
 * the keys of that kind busy now (this one included). So `reserve` slots stay free for a key that
 * has none in flight, which therefore always starts at once while a slot is free; a key alone may
 * use all but the reserve.
 */
export class FairShares {
  readonly #inFlight = new Map<string, Map<string, number>>();

  constructor(
    readonly slots: number,
    readonly reserve: number,
  ) {}

  /** The share of one key of `kind` now: what it may hold at most. */
  shareOf(kind: string, key: string): number {
    const busy = this.#inFlight.get(kind);
    const others = busy ? busy.size - (busy.has(key) ? 1 : 0) : 0;
    return Math.max(1, Math.floor((this.slots - this.reserve) / (others + 1)));
  }

  /** Claims one attempt for `keys` (kind → key), or null when one of them holds its share already. */
  claim(keys: Record<string, string>): ShareClaim | null {
    const entries = Object.entries(keys);
    for (const [kind, key] of entries) {
      if ((this.#inFlight.get(kind)?.get(key) ?? 0) >= this.shareOf(kind, key)) return null;
    }
    for (const [kind, key] of entries) {
      let counts = this.#inFlight.get(kind);
      if (!counts) this.#inFlight.set(kind, (counts = new Map()));
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        for (const [kind, key] of entries) {
          const counts = this.#inFlight.get(kind)!;
          const left = counts.get(key)! - 1;
          if (left > 0) counts.set(key, left);
          else counts.delete(key);
        }
      },
    };
  }
}

/** Where a webhook goes, for its share: the scheme, host and port of its URL (the whole URL when it does not parse). */
export function destinationOf(webhookUrl: string): string {
  try {
    return new URL(webhookUrl).origin;
  } catch {
    return webhookUrl;
  }
}
