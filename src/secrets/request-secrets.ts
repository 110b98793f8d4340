// Render options that are secrets (docs/options.md): sealed before a request enters the RENDERS
// stream, opened by the worker that renders it, so the stream's files never hold them in plain text.
import type { RenderRequest } from '../domain/render.ts';
import type { RenderOptions } from '../domain/options.ts';
import { Sealer } from './sealer.ts';

/**
 * The render options that carry a customer's credentials: a proxy's password, a vision API key, a
 * PDF's passwords, and what the target site is asked with (`authorization`, `cookies`, `headers`: sessions and tokens).
 * A list is sealed item by item, so that it keeps its shape.
 */
export const secretOptions = [
  'proxy',
  'openai_api_key',
  'pdf_password',
  'pdf_owner_password',
  'authorization',
  'cookies',
  'headers',
] as const satisfies readonly (keyof RenderOptions)[];

type SecretValue = string | readonly string[] | null | undefined;
type OptionRecord = Readonly<Record<string, unknown>>;

/** `value` with `change` applied to each of its strings that `pending` picks; the same value when none is. */
function eachString(value: SecretValue, pending: (item: string) => boolean, change: (item: string) => string) {
  if (value === undefined || value === null) return value;
  if (typeof value === 'string') return pending(value) ? change(value) : value;
  return value.some(pending) ? value.map((item) => (pending(item) ? change(item) : item)) : value;
}

/** The secret options of `options` with a string that `pending` picks. */
function secretsPicked(options: OptionRecord, pending: (item: string) => boolean) {
  return secretOptions.filter((name) => {
    const value = options[name] as SecretValue;
    return typeof value === 'string' ? pending(value) : (value?.some(pending) ?? false);
  });
}

/** `options` with the strings of its secret options that `pending` picks changed; the same object when none is. */
function rewritten<T extends OptionRecord>(
  options: T,
  pending: (item: string) => boolean,
  change: (item: string) => string,
): T {
  const names = secretsPicked(options, pending);
  if (names.length === 0) return options;
  const next: Record<string, unknown> = { ...options };
  for (const name of names) next[name] = eachString(next[name] as SecretValue, pending, change);
  return next as T;
}

/** The request with its options', and a merge's every source's, secret strings changed; the same request when none is. */
function rewrittenRequest(
  request: RenderRequest,
  pending: (item: string) => boolean,
  change: (item: string) => string,
): RenderRequest {
  const options = rewritten(request.options, pending, change);
  const sources = request.sources?.map((source) => rewritten(source, pending, change));
  const sourcesChanged = sources?.some((source, index) => source !== request.sources![index]) ?? false;
  if (options === request.options && !sourcesChanged) return request;
  return { ...request, options, ...(sourcesChanged ? { sources } : {}) };
}

/** The names of the secret options `request` holds (a merge's sources included) with a string that `pending` picks. */
function namesPicked(request: RenderRequest, pending: (item: string) => boolean): string[] {
  const names = new Set<string>(secretsPicked(request.options, pending));
  for (const source of request.sources ?? []) for (const name of secretsPicked(source, pending)) names.add(name);
  return [...names];
}

const every = () => true;

/**
 * The request as the stream may hold it: every secret option sealed, a merge's sources' too (the
 * request is not changed). Every string is sealed, also one a customer wrote to look sealed, so
 * that opening gives it back.
 */
export function sealRequestSecrets(request: RenderRequest, sealer: Sealer | undefined): RenderRequest {
  const present = namesPicked(request, every);
  if (present.length === 0) return request;
  if (!sealer) throw new Error(`no sealer to seal ${present.join(', ')}`);
  return rewrittenRequest(request, every, (item) => sealer.seal(item));
}

/** The request as the render needs it: every sealed secret option opened (one from before they were sealed is as it was). */
export function openRequestSecrets(request: RenderRequest, sealer: Sealer | undefined): RenderRequest {
  const sealed = namesPicked(request, Sealer.isSealed);
  if (sealed.length === 0) return request;
  if (!sealer) throw new Error(`no sealer to open ${sealed.join(', ')}`);
  return rewrittenRequest(request, Sealer.isSealed, (item) => sealer.open(item));
}
