// viewport_device names: every id of ScreenshotOne's device list is accepted however a client
// writes it into a query string, and stands for that device's metrics.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { devices } from '../../src/domain/devices.ts';
import { parseAnimateParams } from '../../src/http/animate.ts';
import { parseTakeParams } from '../../src/http/params.ts';
import { SCREENSHOTONE_DEVICE_IDS } from '../fixtures/screenshotone-devices.ts';

const names = suite('device names');

/** The parameters of a GET whose query string is `query`, read as the service reads one. */
const queryOf = (query: string) => ({ kind: 'query' as const, entries: [...new URLSearchParams(query)] });

names('every ScreenshotOne id typed as is into a URL (a "+" unencoded) is accepted by /take and /animate', () => {
  for (const id of SCREENSHOTONE_DEVICE_IDS) {
    for (const query of [
      `url=https://a.example&viewport_device=${id}`,
      `url=https://a.example&viewport_device=${encodeURIComponent(id)}`,
    ]) {
      const take = parseTakeParams(queryOf(query));
      assert.ok('request' in take, `${query}: ${JSON.stringify('problems' in take ? take.problems : '')}`);
      const animate = parseAnimateParams(queryOf(query));
      assert.ok(
        'request' in animate,
        `${query} on /animate: ${JSON.stringify('problems' in animate ? animate.problems : '')}`,
      );
    }
  }
});

names('"galaxy_s9+" sent with its "+" unencoded is the Galaxy S9+, not another device', () => {
  const take = parseTakeParams(queryOf('url=https://a.example&viewport_device=galaxy_s9+_landscape'));
  assert.ok('request' in take);
  assert.equal(devices.find('galaxy_s9 _landscape')?.name, 'Galaxy S9+ landscape');
  assert.equal(devices.find('galaxy_s9 ')?.viewport, devices.find('galaxy_s9+')?.viewport);
  assert.is(devices.find('galaxy_s9+')?.name, 'Galaxy S9+');
  assert.is(devices.find('no such phone'), undefined);
});

names.run();
