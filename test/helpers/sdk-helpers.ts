// What the SDK test drives the options of docs/options.md against: a customer's and a country's
// forward proxy, a fake chat completions API, a webhook receiver and a page that shows its locale.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startForwardProxy, type ForwardProxy } from './forward-proxy.ts';

export interface SdkHelpers {
  base: string;
  customerProxy: ForwardProxy;
  geoProxy: ForwardProxy;
  visionCalls: { headers: http.IncomingHttpHeaders; body: any }[];
  hooks: { path: string; headers: http.IncomingHttpHeaders; body: any }[];
  close(): Promise<void>;
}

const LOCALE_PAGE = `<!doctype html><p id="out"></p><script>out.textContent = navigator.language + ' ' + new Intl.NumberFormat().format(1234.5)</script>`;

/** Starts the helpers on 127.0.0.1. */
export async function startSdkHelpers(): Promise<SdkHelpers> {
  const customerProxy = await startForwardProxy({ credentials: { user: 'sdk', password: 'sdk-proxy-password' } });
  const geoProxy = await startForwardProxy({ credentials: { user: 'geo', password: 'geo-password' } });
  const visionCalls: SdkHelpers['visionCalls'] = [];
  const hooks: SdkHelpers['hooks'] = [];
  const server = http.createServer((req, res) => {
    let text = '';
    req.on('data', (chunk) => (text += chunk));
    req.on('end', () => {
      if (req.url === '/locale') return void res.writeHead(200, { 'content-type': 'text/html' }).end(LOCALE_PAGE);
      const body = text ? JSON.parse(text) : undefined;
      if (req.url === '/v1/chat/completions') {
        visionCalls.push({ headers: req.headers, body });
        const answer = {
          choices: [
            { index: 0, message: { role: 'assistant', content: `Answer to: ${body.messages[0].content[0].text}` } },
          ],
        };
        return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
      }
      hooks.push({ path: req.url ?? '', headers: req.headers, body });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    customerProxy,
    geoProxy,
    visionCalls,
    hooks,
    async close() {
      await Promise.all([customerProxy.close(), geoProxy.close(), new Promise((resolve) => server.close(resolve))]);
    },
  };
}
