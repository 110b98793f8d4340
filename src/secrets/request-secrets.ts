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

type SecretValue = string | readonly string[] | undefined;

/** `value` with `change` applied to each of its strings that `pending` picks; the same value when none is. */
function eachString(value: SecretValue, pending: (item: string) => boolean, change: (item: string) => string) {
  if (value === undefined) return value;
  if (typeof value === 'string') return pending(value) ? change(value) : value;
  return value.some(pending) ? value.map((item) => (pending(item) ? change(item) : item)) : value;
}

/** The secret options of `request` with a string that `pending` picks. */
function secretsPicked(request: RenderRequest, pending: (item: string) => boolean) {
  return secretOptions.filter((name) => {
    const value = request.options[name] as SecretValue;
    return typeof value === 'string' ? pending(value) : (value?.some(pending) ?? false);
  });
}

/** Rewrites the named options' strings that `pending` picks; the request itself is not changed. */
function rewritten(
  request: RenderRequest,
  names: readonly (typeof secretOptions)[number][],
  pending: (item: string) => boolean,
  change: (item: string) => string,
): RenderRequest {
  const options: Record<string, unknown> = { ...request.options };
  for (const name of names) options[name] = eachString(options[name] as SecretValue, pending, change);
  return { ...request, options: options as RenderOptions };
}

const every = () => true;

/**
 * The request as the stream may hold it: every secret option sealed (the request is not changed).
 * Every string is sealed, also one a customer wrote to look sealed, so that opening gives it back.
 */
export function sealRequestSecrets(request: RenderRequest, sealer: Sealer | undefined): RenderRequest {
  const present = secretsPicked(request, every);
  if (present.length === 0) return request;
  if (!sealer) throw new Error(`no sealer to seal ${present.join(', ')}`);
  return rewritten(request, present, every, (item) => sealer.seal(item));
}

/** The request as the render needs it: every sealed secret option opened (one from before they were sealed is as it was). */
export function openRequestSecrets(request: RenderRequest, sealer: Sealer | undefined): RenderRequest {
  const sealed = secretsPicked(request, Sealer.isSealed);
  if (sealed.length === 0) return request;
  if (!sealer) throw new Error(`no sealer to open ${sealed.join(', ')}`);
  return rewritten(request, sealed, Sealer.isSealed, (item) => sealer.open(item));
}
