// The API's error table, in code: every error_code with its HTTP status and public message.

/** One row of the error table. `retryable`: a worker may try the render again. */
export interface ErrorRow {
  status: number;
  message: string;
  retryable?: boolean;
}

/** error_code → status and public message (docs/api.md). */
export const errorTable = {
  request_not_valid: { status: 400, message: 'The request is not valid.' },
  url_not_allowed: {
    status: 400,
    message: 'The URL is not allowed: only public http and https addresses can be rendered.',
  },
  name_not_resolved: { status: 400, message: 'The host name of the URL does not resolve.' },
  access_key_invalid: { status: 401, message: 'The access key is missing or wrong.' },
  screenshots_limit_reached: { status: 402, message: 'The monthly screenshot quota of this workspace is used up.' },
  email_not_verified: {
    status: 403,
    message: 'No member of this workspace has verified an email address yet; free-plan keys work once someone has.',
  },
  signature_is_not_valid: { status: 403, message: 'The signature does not match the request.' },
  signature_is_required: {
    status: 403,
    message: 'This workspace requires signed requests and the request has no signature.',
  },
  forbidden: { status: 403, message: 'Only owners and admins of the workspace can do this.' },
  not_found: { status: 404, message: 'Nothing was found at this address.' },
  request_body_too_large: { status: 413, message: 'The request body is larger than 1 MiB.' },
  request_header_too_large: {
    status: 431,
    message: 'The request line and headers are larger than 16 KiB; send long parameters in a POST body.',
  },
  request_timeout: {
    status: 408,
    message: 'The request did not arrive in time: headers are due within 10 s and the whole request within 30 s.',
  },
  selector_not_found: { status: 422, message: 'The selector matched no element on the page.' },
  matched_failed_request: { status: 422, message: 'A sub-request matching fail_if_request_failed failed.' },
  content_missing_specified_string: {
    status: 422,
    message: 'The page does not contain a text listed in fail_if_content_missing.',
  },
  content_contains_specified_string: {
    status: 422,
    message: 'The page contains a text listed in fail_if_content_contains.',
  },
  script_error: { status: 422, message: 'A script of the scripts parameter threw an error.' },
  gpu_rendering_failed: { status: 422, message: 'GPU rendering was asked for and is not available on this worker.' },
  vision_failed: { status: 502, message: 'The vision API answered with an error or with nothing.' },
  page_memory_exceeded: {
    status: 422,
    message: 'The page used more memory than a render may (docs/browser.md); the render was stopped.',
  },
  concurrency_limit_reached: {
    status: 429,
    message: 'Too many renders of this workspace are in flight; retry shortly.',
  },
  host_returned_error: { status: 502, message: 'The target site answered with an error status.' },
  network_error: { status: 502, message: 'The target site refused or dropped the connection.' },
  storage_upload_failed: {
    status: 502,
    message: 'Your storage refused the upload or could not be reached; error_details has its answer.',
  },
  temporary_unavailable: {
    status: 503,
    message: 'The service is temporarily unavailable; retry shortly.',
    retryable: true,
  },
  timeout_error: { status: 504, message: 'The render did not finish within its timeout.' },
  internal_application_error: { status: 500, message: 'An internal error occurred.', retryable: true },
} satisfies Record<string, ErrorRow>;

/** Every error code the service can answer with. */
export type ErrorCode = keyof typeof errorTable;

/** Extra fields of an error body, e.g. error_details, returned_status_code, matched_string. */
export type ErrorDetails = Record<string, unknown>;

/**
 * A failure with a public code. `cause` (logged, never returned) keeps the internal reason;
 * `retryAfter` (seconds) becomes a Retry-After header.
 */
export class ServiceError extends Error {
  constructor(
    readonly code: ErrorCode,
    readonly details: ErrorDetails = {},
    options: { message?: string; cause?: unknown; retryAfter?: number } = {},
  ) {
    // A 4xx is an expected answer, never logged with a stack: capturing one is most of its cost.
    const stackTraceLimit = Error.stackTraceLimit;
    if (errorTable[code].status < 500) Error.stackTraceLimit = 0;
    super(options.message ?? errorTable[code].message, { cause: options.cause });
    Error.stackTraceLimit = stackTraceLimit;
    this.retryAfter = options.retryAfter;
  }
  readonly retryAfter?: number;
}

/** True when `code` is a known error code. */
export function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === 'string' && Object.hasOwn(errorTable, code);
}

/** The HTTP status of an error code. */
export function statusOf(code: ErrorCode): number {
  return errorTable[code].status;
}

/** The JSON body every failure answers with (docs/api.md). */
export function errorBody(code: ErrorCode, details: ErrorDetails = {}, message?: string) {
  return {
    is_successful: false as const,
    error_code: code,
    error_message: message ?? errorTable[code].message,
    ...details,
  };
}
