// Outages of NATS or of the object store, as a caller hears them: 503 with Retry-After, never a 500.
import { ServiceError } from '../../errors.ts';
import { unavailable } from '../../jetstream/connection.ts';
import { isNatsUnavailable } from '../../jetstream/errors.ts';
import { isStoreUnavailable } from '../../storage/store.ts';

/** `err` itself, or `temporary_unavailable` (with Retry-After) when it says a dependency is out of reach. */
export function asOutage<E>(err: E): E | ServiceError {
  return !(err instanceof ServiceError) && (isNatsUnavailable(err) || isStoreUnavailable(err)) ? unavailable(err) : err;
}
