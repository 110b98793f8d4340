#!/usr/bin/env node
// What `make run` prints once the service answers: the demo workspace's keys and a curl line to paste.
// Usage: node infra/first-run.mjs '<JSON of `shutterbus demo`>'
// Environment: BASE_URL (the service's address).

const demo = JSON.parse(process.argv[2] ?? '{}');
const base = (process.env.BASE_URL ?? 'http://127.0.0.1:3000').replace(/\/+$/, '');
const colour = process.stdout.isTTY ? (code, text) => `\u001b[${code}m${text}\u001b[0m` : (_code, text) => text;
const bold = (text) => colour('1', text);
const dim = (text) => colour('2', text);

// A curl line that works without internet, whatever ALLOW_PRIVATE_TARGETS says: the line sends the
// page itself as an html document, complete when loaded (a page of the service's own, such as
// /docs, would be captured while its script still draws it).
const hello =
  '<body style="font:32px system-ui;display:grid;place-items:center;height:100vh;margin:0;background:#0f172a;color:#e2e8f0"><h1>Hello from Shutterbus</h1></body>';
const curl = `curl -o shot.png -H 'X-Access-Key: ${demo.access_key}' -G '${base}/api/take' --data-urlencode 'html=${hello}'`;

const lines = [
  '',
  bold(`Shutterbus is ready at ${base}`),
  `  API reference  ${base}/docs ${dim('(OpenAPI document at /openapi.json)')}`,
  `  dashboard      ${base}/dashboard`,
  '',
  bold(`Demo workspace ${demo.workspace_id}`) + dim(` (${demo.plan}, ${demo.quota} renders a month; kept across runs)`),
  `  access key     ${demo.access_key}`,
  `  secret key     ${demo.secret_key}`,
  `  signed URL     ${demo.signed_example_url} ${dim('(renders https://example.com: needs internet)')}`,
  '',
  bold('Try it (works offline: the page is sent as an html document):'),
  `  ${curl}`,
  `  ${dim('then open shot.png, or run: file shot.png')}`,
  '',
];
process.stdout.write(`${lines.join('\n')}\n`);
