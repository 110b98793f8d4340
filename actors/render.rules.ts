// The render failure rules (docs/api.md) as pure functions over what a render observed, and the
// one judge that runs them: the render machine hands it to the capture and reads its verdict.

import { errorTable, ServiceError, type ErrorCode, type ErrorDetails, type ErrorRow } from '../src/errors.ts';
import type { PageObservation, RenderOptions } from '../src/domain/options.ts';
import {
  RULE_ORDER,
  wasBlocked,
  wildcardPattern,
  type BrokenRule,
  type RenderFailure,
  type RenderRuleName,
} from '../src/domain/judgement.ts';

export type { RenderFailure, RenderRuleName };

/** A rule: the failure it finds in an observation, or null when the render passes it. */
export type RenderRule = (observation: PageObservation, options: RenderOptions) => RenderFailure | null;

const fail = (code: ErrorCode, details: ErrorDetails): RenderFailure => ({
  code,
  message: errorTable[code].message,
  details,
  retryable: false,
});

/** The main document answered 4xx/5xx and host errors are not ignored. */
export const hostReturnedError: RenderRule = ({ mainStatus }, options) =>
  mainStatus !== null && mainStatus >= 400 && !options.ignore_host_errors
    ? fail('host_returned_error', { returned_status_code: mainStatus })
    : null;

/** `selector` or `scroll_into_view` matched nothing and the request asked to fail on that. */
export const selectorNotFound: RenderRule = ({ missingSelectors }, options) => {
  if (!options.error_on_selector_not_found) return null;
  const missing = new Set(missingSelectors);
  const error_details = (['selector', 'scroll_into_view'] as const)
    .filter((parameter) => options[parameter] !== undefined && missing.has(options[parameter]!))
    .map((parameter) => ({ parameter, selector: options[parameter] }));
  return error_details.length > 0 ? fail('selector_not_found', { error_details }) : null;
};

/**
 * A sub-request matching a fail_if_request_failed pattern failed at the network level or answered
 * ≥ 400; a request the render's blocking stopped is not a failed one.
 */
export const requestFailedMatched: RenderRule = ({ subRequests }, options) => {
  if (options.fail_if_request_failed.length === 0) return null;
  const patterns = options.fail_if_request_failed.map(wildcardPattern);
  const failed = subRequests.find(
    (request) =>
      !wasBlocked(request) &&
      (request.failure !== undefined || (request.status ?? 0) >= 400) &&
      patterns.some((pattern) => pattern.test(request.url)),
  );
  if (!failed) return null;
  return fail('matched_failed_request', {
    failed_request_url: failed.url,
    ...(failed.status === undefined ? {} : { returned_status_code: failed.status }),
  });
};

/** The first fail_if_content_missing text absent from the visible text. */
export const contentMissing: RenderRule = ({ visibleText }, options) => {
  const text = normalise(visibleText);
  const missing = options.fail_if_content_missing.find(
    (wanted) => normalise(wanted) !== '' && !text.includes(normalise(wanted)),
  );
  return missing === undefined ? null : fail('content_missing_specified_string', { matched_string: missing });
};

/** The first fail_if_content_contains text present in the visible text. */
export const contentContains: RenderRule = ({ visibleText }, options) => {
  const text = normalise(visibleText);
  const found = options.fail_if_content_contains.find(
    (unwanted) => normalise(unwanted) !== '' && text.includes(normalise(unwanted)),
  );
  return found === undefined ? null : fail('content_contains_specified_string', { matched_string: found });
};

/** The rules by name. */
export const renderRules: Record<RenderRuleName, RenderRule> = {
  hostReturnedError,
  selectorNotFound,
  requestFailedMatched,
  contentMissing,
  contentContains,
};

/** The first rule `observation` breaks, in RULE_ORDER, and its failure; null when it breaks none. */
export function judge(observation: PageObservation, options: RenderOptions): BrokenRule | null {
  for (const rule of RULE_ORDER) {
    const failure = renderRules[rule](observation, options);
    if (failure) return { rule, failure };
  }
  return null;
}

/** A thrown error as a render failure: a ServiceError keeps its code; anything else is internal and retryable. */
export function failureFromError(error: unknown): RenderFailure {
  if (error instanceof ServiceError) {
    return {
      code: error.code,
      message: error.message,
      details: error.details,
      retryable: (errorTable[error.code] as ErrorRow).retryable ?? false,
      cause: error.cause ?? error,
    };
  }
  return {
    code: 'internal_application_error',
    message: errorTable.internal_application_error.message,
    details: {},
    retryable: true,
    cause: error,
  };
}

// Case-insensitive, and a line break in innerText matches a space in the wanted text.
function normalise(text: string): string {
  return text.replace(/\s+/g, ' ').trim().toLowerCase();
}
