// How a navigation's end is reported, against real Chromium and the fixture site: a target that
// asks for HTTP authentication nobody answers is the host's error, not the network's, and its page
// is captured with ignore_host_errors.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ServiceError } from '../../src/errors.ts';
import { startRenderRig, type RenderRig } from '../helpers/render.ts';

const test = suite('navigation');

let rig: RenderRig;

test.before(async () => {
  rig = await startRenderRig({
    workspaceId: 'ws_navigation',
    routes: {
      '/basic-auth': (_req, res) => {
        res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="members"', 'content-type': 'text/html' });
        res.end('<h1>Sign in</h1>');
      },
    },
  });
});

test.after(async () => {
  await rig?.stop();
});

test('a 401 with a Basic challenge and no authorization is host_returned_error with returned_status_code 401', async () => {
  const error = await rig.render('/basic-auth').then(
    () => null,
    (err: unknown) => err,
  );
  assert.instance(error, ServiceError);
  assert.is((error as ServiceError).code, 'host_returned_error');
  assert.equal((error as ServiceError).details, { returned_status_code: 401 });
  // The next render on the same warm page works.
  const next = await rig.render('/');
  assert.ok(next.image.length > 0);
});

test('with ignore_host_errors the 401 page itself is captured, and the next render on the warm page has no challenge declined for it', async () => {
  const observation = await rig.render('/basic-auth', {
    ignore_host_errors: true,
    fail_if_content_missing: ['Sign in'],
  });
  assert.is(observation.mainStatus, 401);
  assert.match(observation.visibleText, 'Sign in');
  const error = await rig.render('/basic-auth').then(
    () => null,
    (err: unknown) => err,
  );
  assert.is((error as ServiceError).code, 'host_returned_error');
});

test.run();
