// A customer's credentials in the signed URLs /api/bulk hands out (docs/api.md, "Bulk"): a URL is
// embedded, logged and shared, so a secret rides it only sealed, and opens only for a request of
// the workspace it was sealed for. The sealed value is what the URL's signature covers.
import { ServiceError } from '../errors.ts';
import { Sealer, SealError } from '../secrets/sealer.ts';
import type { RawParams } from './params.ts';

/** The parameters whose values are credentials: sealed in a URL. */
const urlSecrets = new Set([
  'storage_secret_access_key',
  'proxy',
  'openai_api_key',
  'pdf_password',
  'pdf_owner_password',
]);

/** `params` with each credential sealed for `workspaceId`'s requests (unchanged without a sealer). */
export function sealUrlSecrets<T extends Record<string, unknown>>(
  params: T,
  workspaceId: string,
  sealer: Sealer | undefined,
): T {
  if (!sealer) return params;
  return Object.fromEntries(
    Object.entries(params).map(([name, value]) => [
      name,
      urlSecrets.has(name) && typeof value === 'string' && !Sealer.isSealed(value)
        ? sealer.seal(`${workspaceId}\n${value}`)
        : value,
    ]),
  ) as T;
}

/**
 * `raw` with every sealed credential opened; one sealed for another workspace, or that does not
 * open (tampered with, another service's key), is a 400 naming it.
 */
export function openUrlSecrets(raw: RawParams, workspaceId: string, sealer: Sealer | undefined): RawParams {
  if (raw.kind !== 'query' || !raw.entries.some(([name, value]) => urlSecrets.has(name) && Sealer.isSealed(value)))
    return raw;
  const problems: { parameter: string; message: string }[] = [];
  const entries = raw.entries.map(([name, value]): [string, string] => {
    if (!urlSecrets.has(name) || !Sealer.isSealed(value)) return [name, value];
    const opened = openOne(value, sealer);
    const owner = opened?.slice(0, opened.indexOf('\n'));
    if (opened === undefined || owner !== workspaceId) {
      problems.push({ parameter: name, message: 'is sealed for another workspace, or does not open' });
      return [name, value];
    }
    return [name, opened.slice(owner.length + 1)];
  });
  if (problems.length > 0) throw new ServiceError('request_not_valid', { error_details: problems });
  return { kind: 'query', entries };
}

function openOne(value: string, sealer: Sealer | undefined): string | undefined {
  if (!sealer) return undefined;
  try {
    const opened = sealer.open(value);
    return opened.includes('\n') ? opened : undefined;
  } catch (err) {
    if (err instanceof SealError) return undefined;
    throw err;
  }
}
