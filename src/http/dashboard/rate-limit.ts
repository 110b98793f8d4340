// A sliding-window limiter kept in memory: each ingress limits what reaches it.
import type { LRUCache } from 'lru-cache';
import { boundedCache } from '../../bounded-cache.ts';

/** Counts attempts per key in a sliding window and says when one key has had too many. */
export class WindowLimiter {
  private readonly attempts: LRUCache<string, number[]>;

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
  ) {
    // Bounded, so a flood of distinct keys cannot grow memory without end.
    this.attempts = boundedCache(50_000, { ttl: windowMs });
  }

  /** Records an attempt; returns 0 when allowed, else the seconds until the next one would be. */
  hit(key: string, now = Date.now()): number {
    const recent = (this.attempts.get(key) ?? []).filter((at) => at > now - this.windowMs);
    if (recent.length >= this.limit) {
      this.attempts.set(key, recent);
      return Math.max(1, Math.ceil((recent[0] + this.windowMs - now) / 1000));
    }
    recent.push(now);
    this.attempts.set(key, recent);
    return 0;
  }

  /** Forgets a key's attempts (after a successful sign-in). */
  reset(key: string): void {
    this.attempts.delete(key);
  }
}

/** Counts events per key in a sliding window without ever refusing: the caller decides what a count means. */
export class WindowCounter {
  private readonly events: LRUCache<string, number[]>;

  constructor(private readonly windowMs: number) {
    this.events = boundedCache(50_000, { ttl: windowMs });
  }

  /** Events of `key` within the window. */
  count(key: string, now = Date.now()): number {
    return (this.events.get(key) ?? []).filter((at) => at > now - this.windowMs).length;
  }

  /** Seconds until the oldest event of `key` in the window leaves it. */
  secondsUntilFewer(key: string, now = Date.now()): number {
    const oldest = (this.events.get(key) ?? []).find((at) => at > now - this.windowMs);
    return oldest === undefined ? 0 : Math.max(1, Math.ceil((oldest + this.windowMs - now) / 1000));
  }

  /** Records one event of `key`. */
  record(key: string, now = Date.now()): void {
    const recent = (this.events.get(key) ?? []).filter((at) => at > now - this.windowMs);
    recent.push(now);
    this.events.set(key, recent);
  }

  /** Forgets `key`. */
  reset(key: string): void {
    this.events.delete(key);
  }
}
