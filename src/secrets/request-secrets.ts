// Render options that are secrets (docs/options.md): sealed before a request enters the RENDERS
// stream, opened by the worker that renders it, so the stream's files never hold them in plain text.
import type { RenderRequest } from '../domain/render.ts';
import type { RenderOptions } from '../domain/options.ts';
import { Sealer } from './sealer.ts';

/** The render options that carry a customer's credentials. */
export const secretOptions = [
  'proxy',
  'openai_api_key',
  'pdf_password',
  'pdf_owner_password',
] as const satisfies readonly (keyof RenderOptions)[];

/** The request as the stream may hold it: every secret option sealed (the request is not changed). */
export function sealRequestSecrets(request: RenderRequest, sealer: Sealer | undefined): RenderRequest {
  const present = secretOptions.filter(
    (name) => request.options[name] !== undefined && !Sealer.isSealed(request.options[name]),
  );
  if (present.length === 0) return request;
  if (!sealer) throw new Error(`no sealer to seal ${present.join(', ')}`);
  const options = { ...request.options };
  for (const name of present) options[name] = sealer.seal(String(options[name]));
  return { ...request, options };
}

/** The request as the render needs it: every sealed secret option opened. */
export function openRequestSecrets(request: RenderRequest, sealer: Sealer | undefined): RenderRequest {
  const sealed = secretOptions.filter((name) => Sealer.isSealed(request.options[name]));
  if (sealed.length === 0) return request;
  if (!sealer) throw new Error(`no sealer to open ${sealed.join(', ')}`);
  const options = { ...request.options };
  for (const name of sealed) options[name] = sealer.open(String(options[name]));
  return { ...request, options };
}
