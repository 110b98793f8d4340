// The gate a customer's URL passes before any render: scheme, host, and every resolved address.
import dns from 'node:dns';
import { ServiceError } from '../errors.ts';
import { isPublicAddress, parseHostLiteral } from './address.ts';

/** One address a name resolves to, as dns.promises.lookup answers with `all: true`. */
export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Resolves a host name to all its addresses; dns.promises.lookup fits, tests inject their own. */
export type LookupFn = (hostname: string, options: { all: true; verbatim: true }) => Promise<ResolvedAddress[]>;

/** How a host is checked: `allowPrivate` skips the address rules (development and tests only). */
export interface TargetPolicy {
  allowPrivate: boolean;
  lookup?: LookupFn;
  /** For tests only: which addresses count as public; defaults to isPublicAddress. */
  isPublic?: (ip: string) => boolean;
  /** The request parameter named in error_details; defaults to `url`. */
  param?: string;
}

const systemLookup: LookupFn = (hostname, options) => dns.promises.lookup(hostname, options);

/**
 * Said beside a refused private or local address: how an operator renders local pages while
 * developing, which is what a loopback URL almost always means.
 */
export const PRIVATE_TARGETS_HINT =
  '(to render local or private pages in development, start the service with ALLOW_PRIVATE_TARGETS=true)';

function refused(policy: TargetPolicy, message: string, cause?: unknown): ServiceError {
  const details = { error_details: [{ parameter: policy.param ?? 'url', message }] };
  return new ServiceError('url_not_allowed', details, { cause });
}

// Named like a refusal: a request may give several addresses (url, webhook_url, storage_endpoint).
function unresolved(policy: TargetPolicy, host: string, cause?: unknown): ServiceError {
  const details = { error_details: [{ parameter: policy.param ?? 'url', message: `${host} does not resolve` }] };
  return new ServiceError('name_not_resolved', details, { cause });
}

function isLocalhostName(hostname: string): boolean {
  // A trailing dot names the same host ("localhost." is localhost).
  const name = hostname.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}

/**
 * One address of `host` that passed the address rules, to connect to and nothing else: the
 * proxy pins it so a second DNS answer (rebinding) can never be used.
 */
export async function resolvePublic(host: string, policy: TargetPolicy): Promise<string> {
  const isPublic = policy.isPublic ?? isPublicAddress;
  const literal = parseHostLiteral(host);
  if (literal) {
    if (!policy.allowPrivate && !isPublic(literal))
      throw refused(policy, `${literal} is not a public address ${PRIVATE_TARGETS_HINT}`);
    return literal;
  }
  // Resolvers answer loopback for these without asking DNS (RFC 6761), so refuse them up front.
  if (!policy.allowPrivate && isLocalhostName(host))
    throw refused(policy, `${host} is a local name ${PRIVATE_TARGETS_HINT}`);
  let addresses: ResolvedAddress[];
  try {
    addresses = await (policy.lookup ?? systemLookup)(host, { all: true, verbatim: true });
  } catch (cause) {
    // ENOTFOUND, ENODATA, EAI_AGAIN, ESERVFAIL...: to the customer all mean the name has no address.
    throw unresolved(policy, host, cause);
  }
  if (addresses.length === 0) throw unresolved(policy, host);
  if (!policy.allowPrivate) {
    // One private answer is enough to refuse: a name mixing both is a rebinding attempt.
    const blocked = addresses.find(({ address }) => !isPublic(address));
    if (blocked)
      throw refused(
        policy,
        `${host} resolves to ${blocked.address}, which is not a public address ${PRIVATE_TARGETS_HINT}`,
      );
  }
  return addresses[0].address;
}

/** The parsed customer URL, once it is an absolute http(s) URL whose host is public. */
export async function checkTargetUrl(raw: string, policy: TargetPolicy): Promise<URL> {
  const parameter = policy.param ?? 'url';
  let url: URL;
  try {
    url = new URL(raw);
  } catch (cause) {
    const details = { error_details: [{ parameter, message: 'must be an absolute http(s) URL' }] };
    throw new ServiceError('request_not_valid', details, { cause });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw refused(policy, `the ${url.protocol.replace(/:$/, '')} scheme is not allowed; use http or https`);
  }
  if (url.username !== '' || url.password !== '') {
    const details = { error_details: [{ parameter, message: 'must not contain a user name or password' }] };
    throw new ServiceError('request_not_valid', details);
  }
  await resolvePublic(url.hostname, policy);
  return url;
}
