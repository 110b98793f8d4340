// The local S3-compatible store (s3rver) as its own process, for `make run` and the tests.
// Usage: node infra/s3rver.js --port 9000 --directory .data/s3
// Keys are s3rver's fixed pair S3RVER / S3RVER; the service creates its bucket itself.
// --access-key-id ID --secret-access-key SECRET replace that pair with another (a store playing a
// customer's, whose keys the service's are not), and --bucket NAME creates a bucket at start.
// --service-endpoint NAME: requests to s3.NAME are path-style (s3rver reads other host names as a
// bucket's own).
import { parseArgs } from 'node:util';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import S3rver from '@20minutes/s3rver';
import AWSAccount from '@20minutes/s3rver/lib/models/account.js';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '9000' },
    address: { type: 'string', default: '127.0.0.1' },
    directory: { type: 'string', default: '.data/s3' },
    'access-key-id': { type: 'string' },
    'secret-access-key': { type: 'string' },
    bucket: { type: 'string' },
    'service-endpoint': { type: 'string', default: 'amazonaws.com' },
  },
});

const port = Number(values.port);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`s3rver: --port "${values.port}" is not a port number`);
  process.exit(2);
}
const directory = path.resolve(values.directory);
mkdirSync(directory, { recursive: true });

if (values['access-key-id'] && values['secret-access-key']) {
  AWSAccount.DUMMY_ACCOUNT.createKeyPair(values['access-key-id'], values['secret-access-key']);
  AWSAccount.DUMMY_ACCOUNT.revokeAccessKey('S3RVER');
}
const configureBuckets = values.bucket ? [{ name: values.bucket }] : [];
const server = new S3rver({
  silent: true,
  address: values.address,
  port,
  directory,
  configureBuckets,
  serviceEndpoint: values['service-endpoint'],
});

try {
  const { address, port: boundPort } = await server.run();
  // Parents may wait for this line; it also tells which port was bound when --port is 0.
  console.log(`s3rver listening on http://${address}:${boundPort} (directory ${directory})`);
} catch (error) {
  console.error(`s3rver: cannot listen on ${values.address}:${port}: ${error.message}`);
  process.exit(1);
}

function shutdown() {
  // Keep-alive sockets can hold close() open; the data is on disk already, so do not wait long.
  setTimeout(() => process.exit(0), 2000).unref();
  server.close().then(
    () => process.exit(0),
    () => process.exit(0),
  );
}
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
