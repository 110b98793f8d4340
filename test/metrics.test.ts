// The Prometheus exposition: counters, histograms and gauges read at the scrape.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { addGaugeCollector, metrics, renderMetrics } from '../src/metrics.ts';

test('counters and gauges read at the scrape; a gauge whose read fails is left out, not the scrape', async () => {
  metrics.webhookAttempts.inc({ outcome: 'delivered' });
  metrics.webhookAttempts.inc({ outcome: 'delivered' });
  metrics.webhookDeadLetters.inc();
  metrics.browserRestarts.inc();
  let depth = 3;
  addGaugeCollector({
    name: 'test_depth',
    help: 'A test gauge.',
    read: async () => [{ labels: { queue: 'a"b' }, value: depth }],
  });
  addGaugeCollector({
    name: 'test_broken',
    help: 'A gauge whose source is down.',
    read: () => Promise.reject(new Error('down')),
  });
  let text = await renderMetrics();
  assert.match(text, /^shutterbus_webhook_attempts_total\{outcome="delivered"\} 2$/m);
  assert.match(text, /^shutterbus_webhook_dead_letters_total 1$/m);
  assert.match(text, /^shutterbus_browser_restarts_total 1$/m);
  assert.match(text, /^# TYPE test_depth gauge$/m);
  assert.match(text, /^test_depth\{queue="a\\"b"\} 3$/m, 'label values escaped');
  assert.not.match(text, /test_broken/);
  depth = 5;
  // A collector registered again under its name replaces the first.
  addGaugeCollector({ name: 'test_depth', help: 'A test gauge.', read: async () => [{ labels: {}, value: depth }] });
  text = await renderMetrics();
  assert.match(text, /^test_depth 5$/m);
  assert.is(text.match(/# TYPE test_depth gauge/g)?.length, 1);
});

test.run();
