// Which proxy a render's traffic leaves through beyond the egress proxy (docs/options.md): the
// customer's `proxy`, or the operator's for `ip_country_code` (GEO_PROXIES); none for most renders.
import type { RenderOptions } from '../domain/options.ts';
import type { UpstreamProxy } from './egress-proxy.ts';

/** The upstream proxy `options` asks for, or undefined. */
export function upstreamProxyOf(
  options: Pick<RenderOptions, 'proxy' | 'ip_country_code' | 'proxy_bypass_hosts'>,
  geoProxies: Readonly<Record<string, string>>,
): UpstreamProxy | undefined {
  const url =
    options.proxy ?? (options.ip_country_code !== undefined ? geoProxies[options.ip_country_code] : undefined);
  if (options.ip_country_code !== undefined && url === undefined)
    throw new Error(`no proxy configured for ${options.ip_country_code} on this worker`);
  return url === undefined ? undefined : { url, bypass: options.proxy_bypass_hosts };
}
