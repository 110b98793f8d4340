// Profiles end to end: real NATS, S3 store and Chromium; a fixture login whose dashboard greets the
// signed-in user and shows a sign-in form to anyone else, in a take, an animation and a monitor.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Workspace } from '../../src/workspaces/workspace.ts';
import { startFixtureSite, type FixtureSite } from '../fixtures/site.ts';
import { stillPages } from '../fixtures/still-pages.ts';
import {
  call,
  createWorkspace,
  startService,
  startStack,
  type TestService,
  type TestStack,
} from '../helpers/service.ts';
import { waitFor } from '../helpers/wait.ts';

const profiles = suite('profiles: pages behind a login');
let stack: TestStack;
let service: TestService;
let site: FixtureSite;
let pages: Awaited<ReturnType<typeof stillPages>>;
let workspace: Workspace;
let other: Workspace;
let receiver: http.Server;
let hookBase: string;
const hooks: { path: string; body: string }[] = [];
// Everything the service answered: the profile's secrets must be in none of it.
const answers: { url: string; text: string }[] = [];

// The session cookie's value and the stored theme: what must never be seen again once stored.
const SESSION_VALUE = 'fixture-session-7d1f-Ada';
const THEME = 'dark-Ada';

profiles.before(async () => {
  stack = await startStack();
  pages = await stillPages();
  site = await startFixtureSite(pages.routes);
  service = await startService(stack, { MONITOR_MIN_INTERVAL: '2' });
  workspace = await createWorkspace(stack, { quota: 500 });
  other = await createWorkspace(stack, { quota: 500 });
  receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      hooks.push({ path: req.url ?? '', body });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  hookBase = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
});

profiles.after(async () => {
  await service?.close();
  await new Promise((resolve) => receiver?.close(resolve));
  await site?.close();
  await pages?.close();
  await stack?.stop();
});

const api = async (url: string, owner: Workspace, init: { method?: string; body?: unknown } = {}) => {
  const answer = await call(url.startsWith('http') ? url : `${service.base}${url}`, {
    method: init.method ?? 'GET',
    headers: {
      'x-access-key': owner.access_key,
      ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
  });
  answers.push({ url, text: answer.bytes.toString('latin1') + JSON.stringify([...answer.headers]) });
  return answer;
};

const storageState = () => {
  const origin = new URL(site.url).origin;
  return {
    cookies: [
      {
        name: 'session',
        value: SESSION_VALUE,
        domain: '127.0.0.1',
        path: '/',
        expires: -1,
        httpOnly: true,
        secure: false,
        sameSite: 'Lax',
      },
    ],
    origins: [{ origin, localStorage: [{ name: 'theme', value: THEME }] }],
  };
};

const dashboardHtml = async (options: Record<string, unknown> = {}, owner = workspace) =>
  api('/api/take', owner, { method: 'POST', body: { url: `${site.url}/still/dashboard`, format: 'html', ...options } });

profiles('POST /api/profiles stores a storage state and answers its name and origins, never the state', async () => {
  const created = await api('/api/profiles', workspace, {
    method: 'POST',
    body: { name: 'ada', storage_state: storageState() },
  });
  assert.is(created.status, 201, created.bytes.toString());
  assert.equal(Object.keys(created.json!).sort(), ['created_at', 'name', 'origins']);
  assert.is(created.json!.name, 'ada');
  assert.ok(created.json!.origins.includes(new URL(site.url).origin));
  const listed = await api('/api/profiles', workspace);
  assert.equal(
    listed.json!.profiles.map((profile: { name: string }) => profile.name),
    ['ada'],
  );
  assert.equal((await api('/api/profiles', other)).json!.profiles, []);
  const bad = await api('/api/profiles', workspace, {
    method: 'POST',
    body: { name: 'no spaces', storage_state: { cookies: 'x' } },
  });
  assert.is(bad.status, 400);
  assert.equal(bad.json!.error_details.map((d: { parameter: string }) => d.parameter).sort(), [
    'name',
    'storage_state',
  ]);
});

profiles('take: the dashboard greets the user with the profile, and asks to sign in without it', async () => {
  const signedIn = await dashboardHtml({ profile: 'ada' });
  assert.is(signedIn.status, 200, signedIn.bytes.toString());
  assert.match(signedIn.bytes.toString(), /Signed in as Ada/);
  assert.match(signedIn.bytes.toString(), /theme dark-Ada/);
  // Undone after the render: the next render on the same warm page has no session.
  const anonymous = await dashboardHtml();
  assert.match(anonymous.bytes.toString(), /id="sign-in"/);
  assert.not.match(anonymous.bytes.toString(), /Signed in/);
  // A png too, with the rule that fails a render that is not signed in.
  const png = await api('/api/take', workspace, {
    method: 'POST',
    body: { url: `${site.url}/still/dashboard`, profile: 'ada', fail_if_content_missing: ['Signed in as Ada'] },
  });
  assert.is(png.status, 200);
  assert.is(png.contentType, 'image/png');
});

profiles(
  "an unknown profile, or another workspace's, is a 400 naming profile; deleting one is 204, then 404",
  async () => {
    const unknown = await dashboardHtml({ profile: 'nobody' });
    assert.is(unknown.status, 400);
    assert.is(unknown.json!.error_code, 'request_not_valid');
    assert.is(unknown.json!.error_details[0].parameter, 'profile');
    const foreign = await dashboardHtml({ profile: 'ada' }, other);
    assert.is(foreign.status, 400);
    assert.is(foreign.json!.error_details[0].parameter, 'profile');
    assert.is((await api('/api/profiles/ada', other, { method: 'DELETE' })).status, 404);
    await api('/api/profiles', workspace, { method: 'POST', body: { name: 'gone', storage_state: storageState() } });
    assert.is((await api('/api/profiles/gone', workspace, { method: 'DELETE' })).status, 204);
    assert.is((await api('/api/profiles/gone', workspace, { method: 'DELETE' })).status, 404);
    assert.is((await dashboardHtml({ profile: 'gone' })).status, 400);
  },
);

profiles('save_profile stores the state a render ends with: a later render is signed in with it', async () => {
  const login = await api('/api/take', workspace, {
    method: 'POST',
    body: { url: `${site.url}/still/login?user=Grace`, save_profile: 'grace', response_type: 'json' },
  });
  assert.is(login.status, 200, login.bytes.toString());
  const listed = await api('/api/profiles', workspace);
  assert.ok(listed.json!.profiles.some((profile: { name: string }) => profile.name === 'grace'));
  const dashboard = await dashboardHtml({ profile: 'grace' });
  assert.match(dashboard.bytes.toString(), /Signed in as Grace/);
  assert.match(dashboard.bytes.toString(), /theme dark-Grace/);
});

profiles('animate: the recording is of the signed-in dashboard with the profile', async () => {
  const body = {
    url: `${site.url}/still/dashboard`,
    format: 'gif',
    duration: 1,
    fail_if_content_missing: ['Signed in as Ada'],
  };
  const signedIn = await api('/api/animate', workspace, { method: 'POST', body: { ...body, profile: 'ada' } });
  assert.is(signedIn.status, 200, signedIn.bytes.toString());
  assert.is(signedIn.contentType, 'image/gif');
  const anonymous = await api('/api/animate', workspace, { method: 'POST', body });
  assert.is(anonymous.status, 422);
  assert.is(anonymous.json!.error_code, 'content_missing_specified_string');
});

profiles('a monitor renders the dashboard signed in with the profile; without it its tick fails', async () => {
  const monitor = (profile: Record<string, unknown>, hook: string) =>
    api('/api/monitors', workspace, {
      method: 'POST',
      body: {
        url: `${site.url}/still/dashboard`,
        interval: 600,
        fail_if_content_missing: ['Signed in as Ada'],
        webhook_url: `${hookBase}${hook}`,
        ...profile,
      },
    });
  const signedIn = await monitor({ profile: 'ada' }, '/hook/signed-in');
  assert.is(signedIn.status, 201, signedIn.bytes.toString());
  const anonymous = await monitor({}, '/hook/anonymous');
  assert.is((await monitor({ profile: 'nobody' }, '/hook/none')).json!.error_details[0].parameter, 'profile');
  await waitFor(
    async () => (await api(`/api/monitors/${signedIn.json!.monitor_id}`, workspace)).json!.last_status === 'succeeded',
    'the signed-in tick succeeded',
    60_000,
  );
  await waitFor(() => hooks.some((hook) => hook.path === '/hook/anonymous'), 'the anonymous tick failed', 60_000);
  assert.is(JSON.parse(hooks.find((hook) => hook.path === '/hook/anonymous')!.body).type, 'monitor.failed');
  assert.not.ok(
    hooks.some((hook) => hook.path === '/hook/signed-in'),
    'no failure of the signed-in monitor',
  );
  assert.ok(anonymous.json!.monitor_id);
});

profiles('the profile is in no answer and nowhere in NATS in plain text', async () => {
  assert.ok(answers.some((answer) => answer.url.startsWith('/api/profiles')));
  for (const answer of [...answers, ...hooks.map((hook) => ({ url: hook.path, text: hook.body }))]) {
    assert.not.ok(answer.text.includes(SESSION_VALUE), `the session cookie in the answer to ${answer.url}`);
    // The dashboard's own page shows the theme it read; no answer about the profile does.
    if (answer.url.startsWith('/api/profiles'))
      assert.not.ok(answer.text.includes(THEME), `the stored theme in the answer to ${answer.url}`);
  }
  const files = (dir: string): string[] =>
    readdirSync(dir).flatMap((name) => {
      const full = path.join(dir, name);
      return statSync(full).isDirectory() ? files(full) : [full];
    });
  const natsFiles = files(stack.nats.dir!);
  assert.ok(natsFiles.length > 0);
  for (const file of natsFiles) {
    const text = readFileSync(file).toString('latin1');
    for (const secret of [SESSION_VALUE, 'fixture-session-7d1f-Grace', THEME, 'dark-Grace'])
      assert.not.ok(text.includes(secret), `${secret} in ${file}`);
  }
});

profiles('a PDF merge takes no profile: one page of many is not signed in alone', async () => {
  const merged = await api('/api/pdf/merge', workspace, {
    method: 'POST',
    body: { profile: 'ada', sources: [{ url: `${site.url}/still/dashboard`, save_profile: 'x' }] },
  });
  assert.is(merged.status, 400);
  assert.equal(merged.json!.error_details.map((d: { parameter: string }) => d.parameter).sort(), [
    'profile',
    'sources[0].save_profile',
  ]);
});

profiles('the OpenAPI document has the profile paths and the new render options', async () => {
  const document = (await call(`${service.base}/openapi.json`)).json!;
  assert.ok(document.paths['/api/profiles'].post && document.paths['/api/profiles'].get);
  assert.ok(document.paths['/api/profiles/{name}'].delete);
  const text = JSON.stringify(document.paths['/api/take']);
  for (const name of [
    'profile',
    'save_profile',
    'disable_animations',
    'mask_selectors',
    'remove_selectors',
    'save_formats',
  ])
    assert.ok(text.includes(`"${name}"`), name);
});

profiles.run();
