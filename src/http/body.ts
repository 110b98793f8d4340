// A POST body that cannot be read (not JSON, not an object, another Content-Type, none): its 400 is
// answered after the access key, email and signature checks on the render routes, which come
// before the parameters (docs/api.md, "Errors").
import type { FastifyRequest } from 'fastify';
import { ServiceError } from '../errors.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** Why the body cannot be read, kept by the parser on a route with `bodyAfterChecks`. */
    bodyRefusal?: ServiceError;
  }
  interface FastifyContextConfig {
    /** The body parsers keep their refusal on the request (bodyRefusal) instead of answering it at once. */
    bodyAfterChecks?: boolean;
  }
}

/** The route option of a route that authenticates before it refuses an unreadable body. */
export const bodyAfterChecks = { config: { bodyAfterChecks: true } } as const;

/** The 400 of a body sent as anything but application/json (or not sent). */
export const contentTypeRefusal = () =>
  new ServiceError('request_not_valid', {
    error_details: [{ parameter: 'Content-Type', message: 'must be application/json' }],
  });

/** A body parser's refusal: kept on the request on a route with `bodyAfterChecks`, else answered. */
export function refuseBody(
  request: FastifyRequest,
  refusal: ServiceError,
  done: (err: Error | null, body?: unknown) => void,
): void {
  if (!request.routeOptions.config?.bodyAfterChecks) return done(refusal);
  request.bodyRefusal = refusal;
  done(null, undefined);
}

/** The 400 of a POST whose body is not a JSON object (unparsed, another Content-Type, absent, an array), or undefined. */
export function bodyRefusalOf(request: FastifyRequest): ServiceError | undefined {
  if (request.bodyRefusal) return request.bodyRefusal;
  if (request.rawBody === undefined) return contentTypeRefusal();
  const body = request.body;
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    return new ServiceError('request_not_valid', {
      error_details: [{ parameter: 'body', message: 'must be a JSON object' }],
    });
  return undefined;
}
