// The lines `make run` prints once the service answers (infra/first-run.mjs): the "try it" line
// renders a finished page, not a page still drawing itself, whether private targets are allowed or not.
import { execFileSync } from 'node:child_process';
import sharp from 'sharp';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Workspace } from '../../src/workspaces/workspace.ts';
import {
  call,
  createWorkspace,
  startService,
  startStack,
  type TestService,
  type TestStack,
} from '../helpers/service.ts';

const firstRun = suite("make run's first lines");
let stack: TestStack;
let service: TestService;
let workspace: Workspace;

firstRun.before(async () => {
  stack = await startStack();
  service = await startService(stack);
  workspace = await createWorkspace(stack);
});
firstRun.after(async () => {
  await service?.close();
  await stack?.stop();
});

/** What first-run.mjs prints for the demo workspace, with ALLOW_PRIVATE_TARGETS as given. */
function printed(allowPrivate: string): string {
  const demo = { ...workspace, signed_example_url: 'https://example.invalid/' };
  return execFileSync(process.execPath, ['infra/first-run.mjs', JSON.stringify(demo)], {
    env: { ...process.env, BASE_URL: service.base, ALLOW_PRIVATE_TARGETS: allowPrivate },
    encoding: 'utf8',
  });
}

/** The request the printed curl line makes: curl -G URL --data-urlencode 'NAME=VALUE'. */
function requestOf(lines: string): { url: string; accessKey: string } {
  const line = lines.split('\n').find((text) => text.trim().startsWith('curl '));
  assert.ok(line, lines);
  const [, accessKey] = /X-Access-Key: ([^']+)'/.exec(line!)!;
  const [, base] = /-G '([^']+)'/.exec(line!)!;
  const [, name, value] = /--data-urlencode '([a-z_]+)=(.*)'$/.exec(line!.trim())!;
  return { url: `${base}?${new URLSearchParams({ [name]: value })}`, accessKey };
}

for (const allowPrivate of ['true', 'false']) {
  firstRun(`with ALLOW_PRIVATE_TARGETS=${allowPrivate}, "try it" renders the whole page at once`, async () => {
    const lines = printed(allowPrivate);
    assert.not.match(lines, '/docs&', 'it does not render the API reference, which draws itself after load');
    const { url, accessKey } = requestOf(lines);
    const shot = await call(url, { headers: { 'x-access-key': accessKey } });
    assert.is(shot.status, 200, JSON.stringify(shot.json));
    // The page's dark background, with its light heading drawn on it: a finished page.
    const { data, info } = await sharp(shot.bytes).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    let dark = 0;
    let light = 0;
    for (let i = 0; i < data.length; i += info.channels) {
      if (data[i] < 40 && data[i + 1] < 40 && data[i + 2] < 60) dark++;
      else if (data[i] > 200 && data[i + 1] > 200 && data[i + 2] > 200) light++;
    }
    const pixels = info.width * info.height;
    assert.ok(dark / pixels > 0.8, `mostly the page's background (${dark} of ${pixels})`);
    assert.ok(light > 500, `its heading drawn (${light} light pixels)`);
  });
}

firstRun.run();
