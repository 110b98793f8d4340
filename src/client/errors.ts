// The one error a Shutterbus call throws: the service's error answer (docs/api.md, "Errors"), typed.

/** One offending parameter of a `400 request_not_valid`. */
export interface ErrorDetail {
  parameter?: string;
  message?: string;
  [field: string]: unknown;
}

/** A call the service refused or failed: its `error_code`, HTTP status, `error_details` and render id. */
export class ShutterbusError extends Error {
  /** The service's `error_code` (`request_not_valid`, `selector_not_found`, ...); `network_error` when no answer came. */
  readonly errorCode: string;
  /** The HTTP status; 0 when no answer came. */
  readonly status: number;
  /** `error_details` of the answer: each offending parameter of a 400, or the failure's own detail. */
  readonly errorDetails: unknown;
  /** The render's id when one was made (the `X-Render-Id` header or the body's `render_id`). */
  readonly renderId: string | undefined;
  /** The whole error answer, with fields such as `returned_status_code` or `matched_string`. */
  readonly body: Readonly<Record<string, unknown>>;

  constructor(init: {
    errorCode: string;
    message: string;
    status: number;
    errorDetails?: unknown;
    renderId?: string;
    body?: Record<string, unknown>;
  }) {
    super(init.message);
    this.name = 'ShutterbusError';
    this.errorCode = init.errorCode;
    this.status = init.status;
    this.errorDetails = init.errorDetails;
    this.renderId = init.renderId;
    this.body = init.body ?? {};
  }
}

/** The ShutterbusError of a non-2xx answer whose body is `text`. */
export function errorOfAnswer(status: number, text: string, headerRenderId: string | null): ShutterbusError {
  let body: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed))
      body = parsed as Record<string, unknown>;
  } catch {
    // Not the service's JSON (a proxy's page): the status and the text's start say what happened.
  }
  const errorCode = typeof body.error_code === 'string' ? body.error_code : `http_${status}`;
  const message =
    typeof body.error_message === 'string' ? body.error_message : `HTTP ${status}: ${text.slice(0, 200).trim()}`;
  const renderId = typeof body.render_id === 'string' ? body.render_id : (headerRenderId ?? undefined);
  return new ShutterbusError({ errorCode, message, status, errorDetails: body.error_details, renderId, body });
}
