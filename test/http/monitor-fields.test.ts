// The monitor field table: each field's check says what a 400 names, on create and in a PATCH.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  createFields,
  monitorFieldProblem,
  monitorFields,
  patchFields,
  type MonitorFieldContext,
} from '../../src/http/monitor-fields.ts';
import type { Workspace } from '../../src/workspaces/workspace.ts';

const fields = suite('monitor fields');
const field = (name: string) => monitorFields.find((row) => row.name === name)!;
const context = (plan: 'free' | 'pro', compare: unknown = 'pixels'): MonitorFieldContext => ({
  workspace: { plan } as Workspace,
  minInterval: 60,
  compare,
});
const problem = (name: string, value: unknown, at = context('pro')) => monitorFieldProblem(field(name), value, at);

fields('create takes its fields in the order it checks them; a PATCH changes its own', () => {
  assert.equal(
    createFields.map((row) => row.name),
    ['interval', 'threshold', 'min_changed_pixels', 'compare', 'ignore_text'],
  );
  assert.equal(
    patchFields.map((row) => row.name),
    ['status', 'interval', 'threshold', 'min_changed_pixels', 'ignore_text', 'webhook_url'],
  );
});

fields('interval: whole seconds, at least the plan allows, at most 30 days', () => {
  assert.is(problem('interval', 60), undefined);
  assert.is(problem('interval', 1.5), 'must be a whole number of seconds');
  assert.is(problem('interval', '60'), 'must be a whole number of seconds');
  assert.is(problem('interval', 30), 'must be at least 60 seconds on the pro plan');
  assert.is(problem('interval', 59, context('free')), 'must be at least 60 seconds on the free plan');
  assert.is(problem('interval', 2_592_001), 'must be at most 2592000 seconds');
});

fields('threshold, min_changed_pixels, compare and status: their ranges and values', () => {
  assert.is(problem('threshold', 0.5), undefined);
  assert.is(problem('threshold', 2), 'must be a number from 0 to 1');
  assert.is(problem('threshold', null), 'must be a number from 0 to 1');
  assert.is(problem('min_changed_pixels', 1), undefined);
  assert.is(problem('min_changed_pixels', 0), 'must be a whole number from 1 to 1000000000');
  assert.is(problem('compare', 'text'), undefined);
  assert.is(problem('compare', 'words'), 'must be one of pixels, text, both');
  assert.is(problem('status', 'paused'), undefined);
  assert.is(problem('status', 'sleeping'), 'must be active or paused');
  assert.is(problem('webhook_url', ''), 'must be an absolute http or https URL');
});

fields('ignore_text: valid patterns, and only when text is compared', () => {
  assert.is(problem('ignore_text', ['\\d+'], context('pro', 'text')), undefined);
  assert.is(problem('ignore_text', ['x'], context('pro', 'pixels')), 'applies only with compare text or both');
  assert.is(
    problem('ignore_text', ['(a+)+$'], context('pro', 'both')),
    'pattern 1 nests quantifiers (like (a+)+): write it without',
  );
});

fields.run();
