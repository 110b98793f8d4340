// What the render machine judges a page by and the page steps are judged on, shared by both sides:
// a failure, the rule broken, the judge's shape, and what both read of a URL pattern and of a
// request the render's blocking stopped. The rules themselves are the machine's (actors/render.rules.ts).
import type { ErrorCode, ErrorDetails } from '../errors.ts';
import type { PageObservation, RenderOptions, SubRequestOutcome } from './options.ts';

/** A failed render as the actor reports it; `cause` is for logs only, never returned. */
export interface RenderFailure {
  code: ErrorCode;
  message: string;
  details: ErrorDetails;
  retryable: boolean;
  cause?: unknown;
}

/** The names of the failure rules, in the order they are checked; the machine's guards carry the same names. */
export const RULE_ORDER = [
  'hostReturnedError',
  'selectorNotFound',
  'requestFailedMatched',
  'contentMissing',
  'contentContains',
] as const;

/** The name of one failure rule. */
export type RenderRuleName = (typeof RULE_ORDER)[number];

/** The first rule a render broke and the failure it reports. */
export interface BrokenRule {
  rule: RenderRuleName;
  failure: RenderFailure;
}

/**
 * The failure rules as one call: the first rule `observation` breaks under `options`, or null. The
 * machine hands its own to the capture, which calls it once, while the page is still at hand.
 */
export type Judge = (observation: PageObservation, options: RenderOptions) => BrokenRule | null;

/** The failure text of a request the render's blocking (block_* options, docs/blocking.md) stopped. */
export const BLOCKED_BY_CLIENT = 'net::ERR_BLOCKED_BY_CLIENT';

/** True when the render itself stopped the request (Chromium adds `.Inspector` when DevTools did): it was never made, so it never failed. */
export const wasBlocked = (request: SubRequestOutcome): boolean =>
  request.failure?.startsWith(BLOCKED_BY_CLIENT) === true;

/** A wildcard pattern (`*` any run, `?` one character) as a regexp anchored to the whole URL. */
export function wildcardPattern(pattern: string): RegExp {
  const source = Array.from(pattern, (char) =>
    char === '*' ? '.*' : char === '?' ? '.' : char.replace(/[.+^${}()|[\]\\/-]/g, '\\$&'),
  ).join('');
  return new RegExp(`^${source}$`, 's');
}

/** What a render observed, with the verdict of the judge it was captured under: `broken` null when it broke no rule, absent when not judged. */
export type JudgedObservation = PageObservation & { broken?: BrokenRule | null };
