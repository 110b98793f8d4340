// Membership against real JetStream KV: one service for the CLI and the dashboard, one truth of who belongs.
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { AccountStore } from '../../src/accounts/accounts.ts';
import { Membership } from '../../src/accounts/membership.ts';
import { loadConfig } from '../../src/config.ts';
import { ServiceError } from '../../src/errors.ts';
import { ensureTopology } from '../../src/jetstream/topology.ts';
import { WorkspaceStore } from '../../src/workspaces/workspace.ts';
import { startNats, type NatsServer } from '../helpers/stack.ts';
import { Sealer } from '../../src/secrets/sealer.ts';

const membership = suite('membership: the CLI and the dashboard change it the same way');
let nats: NatsServer;
let nc: NatsConnection;
let members: Membership;

membership.before(async () => {
  nats = await startNats();
  nc = await connect({ servers: nats.url });
  const topology = await ensureTopology(nc, loadConfig({ NATS_URL: nats.url }));
  const workspaces = new WorkspaceStore(
    topology.workspaces,
    topology.accessKeys,
    new Sealer('test-secrets-key-'.repeat(3)),
  );
  members = new Membership(new AccountStore(topology.accounts), workspaces);
});
membership.after(async () => {
  await nc?.close();
  await nats?.stop();
});

const refusedWith = async (work: Promise<unknown>, code: string) => {
  try {
    await work;
  } catch (err) {
    assert.instance(err, ServiceError);
    assert.is((err as ServiceError).code, code);
    return;
  }
  assert.unreachable(`expected ${code}`);
};

membership(
  'a member added at the CLI is invited: the sign-up form claims nothing, the mailed link (claim) does',
  async () => {
    const workspace = await members.createWorkspace({ plan: 'free', owner: 'owner@example.com' });
    await members.add(workspace.workspace_id, 'Cli.Member@Example.com', 'member', { operator: true });

    const signUp = await members.signUp('cli.member@example.com', 'scrypt-hash');
    assert.is(signUp.outcome, 'invited', 'the sign-up form sets no password for an invited address');
    const invited = await members.accounts.get('cli.member@example.com');
    assert.is(invited?.password_hash, null);
    assert.not.ok(invited?.workspace_ids.includes(workspace.workspace_id), 'not opened before it is claimed');
    assert.equal(invited?.invited_ids, [workspace.workspace_id]);

    // A confirmation of the address alone claims nothing.
    await members.verify('cli.member@example.com');
    assert.not.ok(
      (await members.accounts.get('cli.member@example.com'))?.workspace_ids.includes(workspace.workspace_id),
    );

    await members.claim('cli.member@example.com');
    const after = await members.workspaces.get(workspace.workspace_id);
    assert.equal(
      after?.members.find((m) => m.email === 'cli.member@example.com'),
      { email: 'cli.member@example.com', role: 'member', verified: true },
    );
    const account = await members.accounts.get('cli.member@example.com');
    assert.is(account?.verified, true);
    assert.equal(account?.workspace_ids, [workspace.workspace_id]);
    assert.equal(account?.invited_ids, []);
  },
);

membership(
  'a claim verifies an address in every workspace it belongs to; an invitation starts unverified',
  async () => {
    const first = await members.signUp('two@example.com', 'scrypt-hash');
    assert.is(first.outcome, 'created');
    const second = await members.createWorkspace({ plan: 'free', owner: 'other@example.com' });
    await members.add(second.workspace_id, 'two@example.com', 'admin', { email: 'other@example.com' });
    await members.claim('two@example.com');
    for (const id of [first.outcome === 'created' ? first.workspace.workspace_id : '', second.workspace_id]) {
      const workspace = await members.workspaces.get(id);
      assert.is(workspace?.members.find((m) => m.email === 'two@example.com')?.verified, true, id);
    }
    // Invited after the address was confirmed: unverified there until that invitation is claimed too,
    // and so is the owner of a new workspace (docs/operations.md).
    const third = await members.createWorkspace({ plan: 'free', owner: 'third@example.com' });
    const { member } = await members.add(third.workspace_id, 'two@example.com', 'member', { operator: true });
    assert.is(member.verified, false);
    const fourth = await members.createWorkspace({ plan: 'free', owner: 'two@example.com' });
    assert.is(fourth.members[0].verified, false);
    // An invitation taken back before it is claimed is dropped by the claim.
    await members.remove(third.workspace_id, 'two@example.com', { operator: true });
    const claimed = await members.claim('two@example.com');
    assert.not.ok(claimed.workspace_ids.includes(third.workspace_id));
    assert.ok(claimed.workspace_ids.includes(fourth.workspace_id));
  },
);

membership('the operator verifies one member of one workspace', async () => {
  const first = await members.createWorkspace({ plan: 'free', owner: 'op@example.com' });
  const second = await members.createWorkspace({ plan: 'free', owner: 'op@example.com' });
  assert.equal(await members.verifyMember(first.workspace_id, 'op@example.com'), {
    email: 'op@example.com',
    role: 'owner',
    verified: true,
  });
  assert.is((await members.workspaces.get(second.workspace_id))?.members[0].verified, false);
  // The operator's word claims that invitation, and that one only.
  assert.equal((await members.accounts.get('op@example.com'))?.workspace_ids, [first.workspace_id]);
  await refusedWith(members.verifyMember(first.workspace_id, 'stranger@example.com'), 'not_found');
});

membership('a sign-up of a new address creates its account and workspace; a second one is taken', async () => {
  const created = await members.signUp('new@example.com', 'scrypt-hash');
  assert.is(created.outcome, 'created');
  if (created.outcome !== 'created') return;
  assert.equal(created.workspace.members, [{ email: 'new@example.com', role: 'owner', verified: false }]);
  assert.equal(created.account.workspace_ids, [created.workspace.workspace_id]);
  assert.is((await members.signUp('NEW@example.com', 'another')).outcome, 'taken');
});

membership('roles: admins add members but not owners, owners change roles, the last owner stays', async () => {
  const workspace = await members.createWorkspace({ plan: 'pro', owner: 'boss@example.com' });
  const id = workspace.workspace_id;
  await members.add(id, 'admin@example.com', 'admin', { email: 'boss@example.com' });
  await members.add(id, 'helper@example.com', 'member', { email: 'admin@example.com' });
  await refusedWith(members.add(id, 'sneaky@example.com', 'owner', { email: 'admin@example.com' }), 'forbidden');
  await refusedWith(members.add(id, 'nobody@example.com', 'member', { email: 'helper@example.com' }), 'forbidden');
  await refusedWith(members.setRole(id, 'helper@example.com', 'admin', { email: 'admin@example.com' }), 'forbidden');
  await refusedWith(members.setRole(id, 'boss@example.com', 'member', { email: 'boss@example.com' }), 'forbidden');
  await refusedWith(members.remove(id, 'boss@example.com', { operator: true }), 'forbidden');

  await members.remove(id, 'helper@example.com', { email: 'boss@example.com' });
  assert.not.ok((await members.workspaces.get(id))?.members.some((m) => m.email === 'helper@example.com'));
  assert.not.ok(
    (await members.accounts.get('helper@example.com'))?.workspace_ids.includes(id),
    'the account no longer lists it',
  );
});

membership.run();
