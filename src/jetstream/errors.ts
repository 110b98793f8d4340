// Telling NATS and JetStream failures apart by their API error codes and error classes, not their wording.

/** JetStream API error codes (nats-server's `err_code`) the service acts on. */
export const JetStreamApiCodes = {
  /** No quorum or no leader right now: a node is down or an election is under way. */
  ClusterNotAvailable: 10008,
  NoSuitablePeers: 10005,
  ClusterNotLeader: 10009,
  ConsumerNameInUse: 10013,
  ConsumerNotFound: 10014,
  StreamNameInUse: 10058,
  StreamNotFound: 10059,
  /** A compare-and-set write lost: the subject's last sequence was not the expected one. */
  StreamWrongLastSequence: 10071,
  StreamWrongLastSequenceUnknown: 10164,
  ConsumerAlreadyExists: 10105,
} as const;

/** The API error code of a JetStream failure, if it is one. */
export function apiErrorCode(err: unknown): number | undefined {
  const code = (err as { name?: string; code?: unknown })?.code;
  return /JetStreamApiError|NotFoundError/.test(String((err as Error)?.name)) && typeof code === 'number'
    ? code
    : undefined;
}

/** True when `err` is a JetStream API error with one of `codes`. */
export function isApiError(err: unknown, ...codes: number[]): boolean {
  const code = apiErrorCode(err);
  return code !== undefined && codes.includes(code);
}

/** Error classes nats.js raises when the server is unreachable or does not answer in time. */
const unreachable = new Set([
  'TimeoutError',
  'NoRespondersError',
  'ConnectionError',
  'ClosedConnectionError',
  'DrainingConnectionError',
  'RequestError',
  'JetStreamNotEnabled',
]);

/**
 * True when a failure means NATS or JetStream is out of reach for now (a node lost, a leader being
 * elected, the server down): the caller should be told to retry, and a worker should retry itself.
 */
export function isNatsUnavailable(err: unknown): boolean {
  for (let cause = err; cause; cause = (cause as { cause?: unknown }).cause) {
    const name = String((cause as Error).name);
    if (unreachable.has(name)) return true;
    const code = apiErrorCode(cause);
    if (
      code === JetStreamApiCodes.ClusterNotAvailable ||
      code === JetStreamApiCodes.ClusterNotLeader ||
      code === JetStreamApiCodes.NoSuitablePeers
    )
      return true;
    // JetStream answers 503 while a stream or consumer has no leader.
    if (code !== undefined && (cause as { status?: number }).status === 503) return true;
    if (cause === (cause as { cause?: unknown }).cause) break;
  }
  return false;
}
