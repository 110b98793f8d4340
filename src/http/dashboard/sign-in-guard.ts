// Sign-in limits that slow a password guesser down without letting them lock the owner out: by
// address (a guesser's own addresses are refused), by account and address, and by account from
// anywhere (answers slow down and few run at once), never for a browser the account signed in from.
import { setTimeout as sleep } from 'node:timers/promises';
import { WindowCounter, WindowLimiter } from './rate-limit.ts';

const MINUTE_MS = 60_000;
/** Every sign-in attempt from one address, whatever the account. */
const ATTEMPTS_PER_ADDRESS = 30;
/** Wrong passwords for one account from one address before that address is refused for it. */
const FAILURES_PER_ACCOUNT_AND_ADDRESS = 5;
/** Wrong passwords for one account from anywhere before its answers slow down. */
const FAILURES_BEFORE_SLOWING = 5;
const FIRST_DELAY_MS = 500;
const LONGEST_DELAY_MS = 8_000;
/** Slowed checks of one account that may wait at once: a spread-out guesser cannot run them in parallel. */
const SLOWED_AT_ONCE = 2;

/** What an attempt may do: go ahead (then report how it ended), or come back in `seconds`. */
export type Admission =
  | { kind: 'go'; done(matched: boolean): void }
  | { kind: 'refused'; seconds: number; why: 'address' | 'account-and-address' | 'busy' };

/** The sign-in limits of one ingress (each ingress limits what reaches it). */
export class SignInGuard {
  private readonly byAddress = new WindowLimiter(ATTEMPTS_PER_ADDRESS, 15 * MINUTE_MS);
  private readonly failuresByPair = new WindowCounter(15 * MINUTE_MS);
  private readonly failuresByAccount = new WindowCounter(15 * MINUTE_MS);
  private readonly slowed = new Map<string, number>();

  /** How long an attempt on an account waits before its password is checked (0: not slowed). */
  delayMs(email: string, now = Date.now()): number {
    const failures = this.failuresByAccount.count(email, now);
    if (failures < FAILURES_BEFORE_SLOWING) return 0;
    return Math.min(LONGEST_DELAY_MS, FIRST_DELAY_MS * 2 ** (failures - FAILURES_BEFORE_SLOWING));
  }

  /**
   * Admits one attempt on `email` from `address`, waiting out the account's slow-down first. A
   * browser that signed in to the account before (`knownDevice`) skips the per-account measures:
   * a stranger's failures never slow or refuse the owner's own browser.
   */
  async admit(email: string, address: string, knownDevice: boolean): Promise<Admission> {
    const addressWait = this.byAddress.hit(address);
    if (addressWait) return { kind: 'refused', seconds: addressWait, why: 'address' };
    const pair = `${email}\n${address}`;
    const done = (matched: boolean) => {
      if (matched) return this.failuresByPair.reset(pair);
      this.failuresByPair.record(pair);
      this.failuresByAccount.record(email);
    };
    if (knownDevice) return { kind: 'go', done };
    if (this.failuresByPair.count(pair) >= FAILURES_PER_ACCOUNT_AND_ADDRESS) {
      return { kind: 'refused', seconds: this.failuresByPair.secondsUntilFewer(pair), why: 'account-and-address' };
    }
    const delay = this.delayMs(email);
    if (delay === 0) return { kind: 'go', done };
    const waiting = this.slowed.get(email) ?? 0;
    if (waiting >= SLOWED_AT_ONCE) return { kind: 'refused', seconds: Math.ceil(delay / 1000), why: 'busy' };
    this.slowed.set(email, waiting + 1);
    try {
      await sleep(delay);
    } finally {
      const left = (this.slowed.get(email) ?? 1) - 1;
      if (left > 0) this.slowed.set(email, left);
      else this.slowed.delete(email);
    }
    return { kind: 'go', done };
  }
}
