import net from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { Client } from 'minio';
import { freePort, startNats, startS3, type NatsServer, type S3Server } from './stack.ts';

const stack = suite<{ nats: NatsServer; s3: S3Server; nc?: NatsConnection }>('stack');

stack.before(async (context) => {
  [context.nats, context.s3] = await Promise.all([startNats(), startS3()]);
});

stack.after(async (context) => {
  await context.nc?.close();
  await Promise.all([context.nats?.stop(), context.s3?.stop()]);
});

stack('freePort gives a loopback port nobody listens on', async () => {
  const port = await freePort();
  assert.ok(port > 0 && port < 65536);
  const refused = await new Promise<boolean>((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
  assert.ok(refused, 'nothing listens on it');
});

stack('NATS accepts connections and JetStream answers', async (context) => {
  assert.is(context.nats.url, `nats://127.0.0.1:${context.nats.port}`);
  context.nc = await connect({ servers: context.nats.url });
  const jsm = await jetstreamManager(context.nc);
  const account = await jsm.getAccountInfo();
  assert.is(account.streams, 0);
});

stack('the S3 store keeps an object', async (context) => {
  const { port, accessKey, secretKey } = context.s3;
  const s3 = new Client({ endPoint: '127.0.0.1', port, useSSL: false, accessKey, secretKey, region: 'us-east-1' });
  await s3.makeBucket('stack-test', 'us-east-1');
  const body = Buffer.from('a screenshot, pretend');
  await s3.putObject('stack-test', 'renders/one.png', body, body.length, { 'Content-Type': 'image/png' });
  const stat = await s3.statObject('stack-test', 'renders/one.png');
  assert.is(stat.size, body.length);
  const chunks: Buffer[] = [];
  for await (const chunk of await s3.getObject('stack-test', 'renders/one.png')) chunks.push(chunk as Buffer);
  assert.equal(Buffer.concat(chunks), body);
});

stack('stop() ends the servers and frees their ports', async (context) => {
  const { port: natsPort } = context.nats;
  const { port: s3Port } = context.s3;
  await context.nc?.close();
  context.nc = undefined;
  await Promise.all([context.nats.stop(), context.s3.stop()]);
  for (const port of [natsPort, s3Port]) {
    const refused = await new Promise<boolean>((resolve) => {
      const socket = net.connect({ host: '127.0.0.1', port });
      socket.once('connect', () => {
        socket.destroy();
        resolve(false);
      });
      socket.once('error', () => resolve(true));
    });
    assert.ok(refused, `port ${port} still answers after stop()`);
  }
});

stack.run();
