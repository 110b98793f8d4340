// The monitors pages and the plan's limits on a free workspace: owners pause, members look, strangers find nothing.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { shutterbus } from '../helpers/cli.ts';
import { call, startService, startStack, type TestService, type TestStack } from '../helpers/service.ts';
import { signUp as signUpAt, Visitor } from '../helpers/visitor.ts';

const pages = suite('dashboard: monitors');
let stack: TestStack;
let service: TestService;

pages.before(async () => {
  stack = await startStack();
  // No render role: monitors are created and changed, never ticked.
  service = await startService(stack, { ROLES: 'ingress' });
});
pages.after(async () => {
  await service?.close();
  await stack?.stop();
});

async function signUp(email: string): Promise<{ visitor: Visitor; workspaceId: string }> {
  const visitor = await signUpAt(service.base, email, { confirm: stack });
  const workspaceId = /<span class="mono">(ws_[0-9a-f]+)<\/span>/.exec((await visitor.get('/dashboard/keys')).text)![1];
  return { visitor, workspaceId };
}

pages(
  'a free workspace: a monitor every minute, and its number of monitors; owners pause, members only look, strangers get 404',
  async () => {
    const { visitor: owner, workspaceId } = await signUp('watcher@example.com');
    assert.is(
      (await shutterbus(stack, 'member', 'verify', '--workspace', workspaceId, '--email', 'watcher@example.com')).code,
      0,
    );
    const { access_key } = (await shutterbus(stack, 'workspace', 'show', '--workspace', workspaceId)).json;
    const create = (body: Record<string, unknown>) =>
      call(`${service.base}/api/monitors`, {
        method: 'POST',
        headers: { 'x-access-key': access_key, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const target = { url: 'http://127.0.0.1:9/watched?<b>', webhook_url: 'http://127.0.0.1:9/hook' };

    // Every plan may tick every minute (docs/monitors.md): 59 s is refused, 60 s is not.
    const tooOften = await create({ ...target, interval: 59 });
    assert.is(tooOften.status, 400);
    assert.equal(tooOften.json!.error_details, [
      { parameter: 'interval', message: 'must be at least 60 seconds on the free plan' },
    ]);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const created = await create({ ...target, interval: 60 });
      assert.is(created.status, 201, JSON.stringify(created.json));
      ids.push(created.json!.monitor_id);
    }
    const fourth = await create({ ...target, interval: 900 });
    assert.is(fourth.status, 400);
    assert.equal(fourth.json!.error_details, [
      { parameter: 'monitors', message: 'the free plan allows at most 3 monitors' },
    ]);

    const list = await owner.get('/dashboard/monitors');
    assert.is(list.status, 200);
    for (const id of ids) assert.match(list.text, `id="monitor-${id}"`);
    assert.not.match(list.text, '?<b>', 'the target is escaped');
    assert.match(list.text, /type="submit">Pause</);

    const paused = await owner.post(`/dashboard/monitors/${ids[0]}/status`, { status: 'paused' });
    assert.is(paused.status, 303, paused.text);
    assert.is(paused.location, '/dashboard/monitors?notice=monitor-paused');
    const shown = await call(`${service.base}/api/monitors/${ids[0]}`, { headers: { 'x-access-key': access_key } });
    assert.is(shown.json!.status, 'paused');
    assert.match(
      (await owner.get('/dashboard/monitors')).text,
      new RegExp(`id="monitor-${ids[0]}" data-status="paused"`),
    );
    assert.is((await owner.post(`/dashboard/monitors/${ids[0]}/status`, { status: 'sleeping' })).status, 400);
    const detail = await owner.get(`/dashboard/monitors/${ids[0]}`);
    assert.is(detail.status, 200);
    assert.match(detail.text, /No change announced yet/);

    // A member sees the monitors but not the button, and the form refuses them.
    await owner.post('/dashboard/members/invite', { email: 'looker@example.com', role: 'member' });
    const outbox = (await shutterbus(stack, 'mail', 'outbox')).json.messages as { to: string; text: string }[];
    const accept = outbox
      .filter((m) => m.to === 'looker@example.com')
      .at(-1)!
      .text.match(/http\S+\/dashboard\/accept\?token=\S+/)![0];
    const member = new Visitor(service.base);
    const token = /name="token" value="([^"]+)"/.exec((await member.get(accept.slice(service.base.length))).text)![1];
    assert.is(
      (await member.post('/dashboard/accept', { token, password: 'chosen through the mailed link' })).status,
      303,
    );
    const seen = await member.get('/dashboard/monitors');
    assert.match(seen.text, `id="monitor-${ids[1]}"`);
    assert.not.match(seen.text, /type="submit">(Pause|Resume)</);
    assert.is((await member.post(`/dashboard/monitors/${ids[1]}/status`, { status: 'paused' })).status, 403);

    const { visitor: stranger } = await signUp('stranger@example.com');
    assert.is((await stranger.get(`/dashboard/monitors/${ids[1]}`)).status, 404);
    assert.is((await stranger.post(`/dashboard/monitors/${ids[1]}/status`, { status: 'paused' })).status, 404);
    assert.match((await stranger.get('/dashboard/monitors')).text, /no monitors yet/);
  },
);

pages.run();
