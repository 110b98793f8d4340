// The API's one error handler: every failure, ours or Fastify's, answered with the API's error body and status.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { errorBody, errorTable, isErrorCode, ServiceError, type ErrorCode } from '../../errors.ts';
import { NATS_RETRY_AFTER_SECONDS } from '../../jetstream/connection.ts';
import { asOutage } from './outage.ts';

declare module 'fastify' {
  interface FastifyReply {
    /** The error code this reply answered with, for the access log. */
    errorCode?: ErrorCode;
  }
}

/** Maps Fastify's own failures (parsing, limits, routing) onto the API's error codes. */
const fastifyCodes: Record<string, ErrorCode> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'request_body_too_large',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'request_not_valid',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'request_not_valid',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'request_not_valid',
  FST_ERR_CTP_INVALID_JSON_BODY: 'request_not_valid',
  FST_ERR_BAD_URL: 'request_not_valid',
  FST_ERR_MAX_PARAM_LENGTH: 'request_not_valid',
  FST_ERR_VALIDATION: 'request_not_valid',
  FST_ERR_NOT_FOUND: 'not_found',
};

/** Which part of the request a Fastify-level request_not_valid is about (the body unless listed). */
const fastifyParameters: Record<string, string> = {
  FST_ERR_BAD_URL: 'path',
  FST_ERR_MAX_PARAM_LENGTH: 'path',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'Content-Type',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'Content-Length',
};

/** Answers a failure with the API's error body: the error handler, and Fastify's own routing failures. */
export function answerError(raw: FastifyError | ServiceError, request: FastifyRequest, reply: FastifyReply): void {
  // An outage of NATS or of the store is the caller's 503 with Retry-After, never a 500.
  const err = asOutage(raw);
  if (err !== raw) request.log.warn({ err: raw }, 'a dependency is out of reach');
  const code: ErrorCode =
    err instanceof ServiceError ? err.code : (fastifyCodes[(err as FastifyError).code] ?? fallbackCode(err));
  const parameter = fastifyParameters[(err as FastifyError).code] ?? 'body';
  const details =
    err instanceof ServiceError
      ? err.details
      : code === 'request_not_valid'
        ? { error_details: [{ parameter, message: err.message }] }
        : {};
  const status = errorTable[code].status;
  reply.errorCode = code;
  // Only a bug is an error; anything else is in the access log line.
  if (code === 'internal_application_error') request.log.error({ err, error_code: code }, 'request failed');
  const retryAfter =
    (err instanceof ServiceError ? err.retryAfter : undefined) ??
    (code === 'temporary_unavailable' ? NATS_RETRY_AFTER_SECONDS : undefined);
  if (retryAfter !== undefined) reply.header('Retry-After', String(Math.ceil(retryAfter)));
  // A 5xx body carries the table's public message, never the internal one.
  const message =
    status >= 500 && code === 'internal_application_error'
      ? undefined
      : err instanceof ServiceError
        ? err.message
        : undefined;
  reply
    .code(status)
    .type('application/json')
    .send(errorBody(code, details, message));
}

/** Answers a request no route matched. */
export function answerNotFound(_request: FastifyRequest, reply: FastifyReply): void {
  reply.errorCode = 'not_found';
  reply.code(404).send(errorBody('not_found', {}, 'No such route.'));
}

function fallbackCode(err: { statusCode?: number; code?: string }): ErrorCode {
  if (isErrorCode(err.code)) return err.code;
  if (err.statusCode === 400 || err.statusCode === 415) return 'request_not_valid';
  if (err.statusCode === 413) return 'request_body_too_large';
  return 'internal_application_error';
}
