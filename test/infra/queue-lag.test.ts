// The lag KEDA scales render workers on (infra/kubernetes/base/autoscaling.yaml), read the way KEDA's
// nats-jetstream scaler reads it: /jsz?acc=$G&consumers=true&config=true of nats-server's monitoring
// port, num_pending + num_ack_pending of the render-workers consumer of the RENDERS stream. Renders
// wait with no worker running, and the lag falls once one starts.
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { parseAllDocuments } from 'yaml';
import { names } from '../../src/jetstream/topology.ts';
import {
  call,
  createWorkspace,
  spawnService,
  startService,
  startStack,
  type TestService,
  type TestStack,
} from '../helpers/service.ts';
import { pause, waitFor } from '../helpers/wait.ts';

/** What KEDA reads of /jsz: accounts, their streams, the streams' consumers. */
interface Jsz {
  account_details?: {
    id: string;
    name: string;
    stream_detail?: {
      name: string;
      consumer_detail?: { name: string; num_pending: number; num_ack_pending: number }[];
    }[];
  }[];
}

/** The trigger of the render workers' ScaledObject, as the manifests give it. */
function renderTrigger(): Record<string, string> {
  const file = fileURLToPath(new URL('../../infra/kubernetes/base/autoscaling.yaml', import.meta.url));
  const scaled = parseAllDocuments(readFileSync(file, 'utf8'))
    .map((document) => document.toJS())
    .find((object) => object.kind === 'ScaledObject' && object.metadata.name === 'shutterbus-render');
  return scaled.spec.triggers[0].metadata;
}

/** The consumer's lag as KEDA computes it (getMaxMsgLag), from `monitorPort`. */
async function kedaLag(monitorPort: number, trigger: Record<string, string>): Promise<number> {
  const query = new URLSearchParams({ acc: trigger.account, consumers: 'true', config: 'true' });
  const jsz = (await (await fetch(`http://127.0.0.1:${monitorPort}/jsz?${query}`)).json()) as Jsz;
  const account = jsz.account_details?.find((entry) => entry.name === trigger.account || entry.id === trigger.account);
  const stream = account?.stream_detail?.find((entry) => entry.name === trigger.stream);
  const consumer = stream?.consumer_detail?.find((entry) => entry.name === trigger.consumer);
  if (!consumer) throw new Error(`no consumer ${trigger.stream}/${trigger.consumer} in /jsz: ${JSON.stringify(jsz)}`);
  return consumer.num_pending + consumer.num_ack_pending;
}

const lag = suite('the render queue lag KEDA scales on');
let stack: TestStack;
let ingress: TestService;
let worker: ChildProcess | undefined;

lag.before(async () => {
  stack = await startStack({ natsMonitor: true });
  ingress = await startService(stack, { ROLES: 'ingress' });
});
lag.after(async () => {
  worker?.kill('SIGKILL');
  await ingress?.close();
  await stack?.stop();
});

lag('renders waiting with no worker are the lag; it falls to 0 once a worker runs', async () => {
  const trigger = renderTrigger();
  assert.equal([trigger.stream, trigger.consumer], [names.renderStream, names.renderConsumer]);
  const monitorPort = stack.nats.monitorPort!;
  assert.is(await kedaLag(monitorPort, trigger), 0, 'nothing waits yet');

  const workspace = await createWorkspace(stack, { quota: 50 });
  const auth = { headers: { 'x-access-key': workspace.access_key } };
  const waiting = 6;
  const accepted = await Promise.all(
    Array.from({ length: waiting }, (_, i) =>
      call(
        `${ingress.base}/api/take?${new URLSearchParams({ url: `${stack.site.url}/?lag=${i}`, async: 'true' })}`,
        auth,
      ),
    ),
  );
  for (const answer of accepted) assert.is(answer.status, 202, JSON.stringify(answer.json));
  assert.is(await kedaLag(monitorPort, trigger), waiting, 'every render waits');
  await pause(1000);
  assert.is(await kedaLag(monitorPort, trigger), waiting, 'and keeps waiting: no worker runs');

  worker = await spawnService(stack, { ROLES: 'render', RENDER_CONCURRENCY: '2' });
  const seen: number[] = [];
  await waitFor(
    async () => {
      seen.push(await kedaLag(monitorPort, trigger));
      return seen.at(-1) === 0;
    },
    'the lag falls to 0',
    60_000,
    100,
  );
  assert.ok(
    seen.some((value) => value > 0 && value < waiting),
    `it fell as the worker took renders: ${seen.join(' ')}`,
  );
  for (const { json } of accepted) {
    const status = await call(`${ingress.base}/api/renders/${json!.render_id}`, auth);
    assert.is(status.json!.status, 'succeeded');
  }
});

lag.run();
