// The sign-in limits on their own: what a guesser's failures do to the guesser, to other
// addresses and to the owner's own browser.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { SignInGuard } from '../../src/http/dashboard/sign-in-guard.ts';

const guard = suite('sign-in guard');

async function fail(limits: SignInGuard, email: string, address: string): Promise<void> {
  const admission = await limits.admit(email, address, false);
  assert.is(admission.kind, 'go');
  if (admission.kind === 'go') admission.done(false);
}

guard(
  'failures refuse the guessing address for that account only, then slow the account for new browsers',
  async () => {
    const limits = new SignInGuard();
    for (let i = 0; i < 5; i++) await fail(limits, 'owner@example.com', '203.0.113.1');
    const refused = await limits.admit('owner@example.com', '203.0.113.1', false);
    assert.equal(refused.kind === 'refused' && refused.why, 'account-and-address');
    assert.is(
      (await limits.admit('someone.else@example.com', '203.0.113.1', false)).kind,
      'go',
      'other accounts from that address',
    );

    assert.is(limits.delayMs('owner@example.com'), 500);
    const started = Date.now();
    const slowed = await limits.admit('owner@example.com', '198.51.100.1', false);
    assert.is(slowed.kind, 'go');
    assert.ok(Date.now() - started >= 480, 'waited');

    const known = Date.now();
    assert.is(
      (await limits.admit('owner@example.com', '203.0.113.1', true)).kind,
      'go',
      "the owner's browser, even from the guessing address",
    );
    assert.ok(Date.now() - known < 100, 'not slowed');
  },
);

guard('slowed attempts on one account wait two at a time; a third is refused for a few seconds', async () => {
  const limits = new SignInGuard();
  for (let i = 0; i < 5; i++) await fail(limits, 'busy@example.com', `203.0.113.${10 + i}`);
  const waiting = [
    limits.admit('busy@example.com', '198.51.100.2', false),
    limits.admit('busy@example.com', '198.51.100.3', false),
  ];
  const third = await limits.admit('busy@example.com', '198.51.100.4', false);
  assert.equal(third.kind === 'refused' && [third.why, third.seconds], ['busy', 1]);
  assert.equal(
    (await Promise.all(waiting)).map((a) => a.kind),
    ['go', 'go'],
  );
  assert.is((await limits.admit('busy@example.com', '198.51.100.4', false)).kind, 'go', 'once they are through');
  // The slow-down grows with failures and stops growing at 8 s.
  for (let i = 0; i < 6; i++) {
    const admission = await limits.admit('slow@example.com', `192.0.2.${i}`, true);
    if (admission.kind === 'go') admission.done(false);
  }
  assert.is(limits.delayMs('slow@example.com'), 1000);
  for (let i = 0; i < 10; i++) {
    const admission = await limits.admit('slow@example.com', `192.0.2.${20 + i}`, true);
    if (admission.kind === 'go') admission.done(false);
  }
  assert.is(limits.delayMs('slow@example.com'), 8000);
});

guard.run();
