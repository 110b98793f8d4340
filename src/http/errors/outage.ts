// Outages of NATS or of the object store, as a caller hears them: 503 with Retry-After, never a 500.
import { ServiceError } from '../../errors.ts';
import { unavailable } from '../../jetstream/connection.ts';
import { isNatsUnavailable } from '../../jetstream/errors.ts';
import { isStoreUnavailable } from '../../storage/store.ts';
import { SealError } from '../../secrets/sealer.ts';

/**
 * `err` itself, or `temporary_unavailable` (with Retry-After) when it says a dependency is out of
 * reach, or that a record was sealed under a key this process lacks: the operator's to fix (one
 * SECRETS_KEY for every process, docs/security.md), not a bug of the request.
 */
export function asOutage<E>(err: E): E | ServiceError {
  const outOfReach = isNatsUnavailable(err) || isStoreUnavailable(err) || missingKey(err);
  return !(err instanceof ServiceError) && outOfReach ? unavailable(err) : err;
}

function missingKey(err: unknown): boolean {
  return err instanceof SealError && err.missingKeyId !== undefined;
}
