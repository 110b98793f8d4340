// A customer's bucket on its own: the connection goes to the checked address only, large objects go
// up in parts, and refusals carry the storage's own code. Against a real local S3 store.
import { randomBytes } from 'node:crypto';
import { Client as S3Client } from 'minio';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ServiceError } from '../../src/errors.ts';
import { Sealer } from '../../src/secrets/sealer.ts';
import { PART_SIZE, uploadOutput } from '../../src/storage/customer-bucket.ts';
import type { StoreTarget } from '../../src/domain/storage.ts';
import { startS3, type S3Server } from '../helpers/stack.ts';

const customerBucket = suite('customer bucket');
const sealer = new Sealer(randomBytes(32).toString('base64url'));
const keys = {
  accessKey: 'UNITKEY',
  secretKey: `unit-secret-${randomBytes(8).toString('hex')}`,
  bucket: 'unit-bucket',
  serviceEndpoint: 'customer.invalid',
};
let store: S3Server;
let reader: S3Client;

customerBucket.before(async () => {
  store = await startS3(keys);
  reader = new S3Client({
    endPoint: '127.0.0.1',
    port: store.port,
    useSSL: false,
    accessKey: keys.accessKey,
    secretKey: keys.secretKey,
    region: 'us-east-1',
    pathStyle: true,
  });
});
customerBucket.after(async () => {
  await store?.stop();
});

const target = (overrides: Partial<StoreTarget> = {}): StoreTarget => ({
  endpoint: store.endpoint,
  bucket: keys.bucket,
  region: 'us-east-1',
  access_key_id: keys.accessKey,
  secret_access_key: sealer.seal(keys.secretKey),
  key: 'unit/object.png',
  acl: '',
  storage_class: 'standard',
  return_location: false,
  ...overrides,
});
const soon = () => Date.now() + 2000;
const failureOf = async (promise: Promise<unknown>) => {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof ServiceError, String(err));
    return err as ServiceError;
  }
  throw new Error('expected a failure');
};
const detailOf = (err: ServiceError) => (err.details.error_details as { code: string; message: string }[])[0];

customerBucket('the connection goes to the address that was checked, whatever the name would resolve to', async () => {
  const lookups: string[] = [];
  // A name no resolver knows: the upload can only work through the pinned address.
  const endpoint = `http://s3.customer.invalid:${store.port}`;
  const lookup = async (host: string) => (lookups.push(host), [{ address: '127.0.0.1', family: 4 }]);
  const result = await uploadOutput(
    target({ endpoint, key: 'pinned/a.png', return_location: true }),
    Buffer.from('png bytes'),
    'png',
    { sealer, allowPrivate: true, lookup, until: soon() },
  );
  assert.equal(result, {
    bucket: keys.bucket,
    key: 'pinned/a.png',
    location: `${endpoint}/${keys.bucket}/pinned/a.png`,
  });
  assert.equal(lookups, ['s3.customer.invalid'], 'resolved once, by the check');
  assert.is((await reader.statObject(keys.bucket, 'pinned/a.png')).size, 9);
});

customerBucket(
  'a name that resolves to a private address is refused when private targets are not allowed',
  async () => {
    const lookup = async () => [{ address: '10.1.2.3', family: 4 }];
    const err = await failureOf(
      uploadOutput(target({ endpoint: 'http://rebinding.example:9000' }), Buffer.from('x'), 'png', {
        sealer,
        allowPrivate: false,
        lookup,
        until: soon(),
      }),
    );
    assert.is(err.code, 'storage_upload_failed');
    assert.is(detailOf(err).code, 'AddressNotAllowed');
    assert.match(detailOf(err).message, '10.1.2.3');
  },
);

// minio sends an object above PART_SIZE as a multipart upload (s3rver gives such an object a plain
// MD5 ETag, so that the parts were used shows only in that the object arrives whole).
customerBucket('an object larger than a part goes up in parts and arrives whole', async () => {
  const bytes = randomBytes(PART_SIZE * 2 + 12345);
  await uploadOutput(target({ key: 'large/object.pdf' }), bytes, 'pdf', {
    sealer,
    allowPrivate: true,
    until: soon() + 30_000,
  });
  const chunks: Buffer[] = [];
  for await (const chunk of await reader.getObject(keys.bucket, 'large/object.pdf')) chunks.push(chunk as Buffer);
  assert.ok(Buffer.concat(chunks).equals(bytes));
  const stat = await reader.statObject(keys.bucket, 'large/object.pdf');
  assert.is(stat.metaData['content-type'], 'application/pdf');
});

customerBucket(
  "refusals carry the storage's own code: unknown key, no such bucket, a secret sealed under another key",
  async () => {
    const wrongKey = await failureOf(
      uploadOutput(target({ access_key_id: 'NOSUCHKEY' }), Buffer.from('x'), 'png', {
        sealer,
        allowPrivate: true,
        until: soon(),
      }),
    );
    assert.is(detailOf(wrongKey).code, 'InvalidAccessKeyId');
    const noBucket = await failureOf(
      uploadOutput(target({ bucket: 'no-such-bucket' }), Buffer.from('x'), 'png', {
        sealer,
        allowPrivate: true,
        until: soon(),
      }),
    );
    assert.is(detailOf(noBucket).code, 'NoSuchBucket');
    const otherKey = new Sealer(randomBytes(32).toString('base64url'));
    const unopenable = await failureOf(
      uploadOutput(target({ secret_access_key: otherKey.seal(keys.secretKey) }), Buffer.from('x'), 'png', {
        sealer,
        allowPrivate: true,
        until: soon(),
      }),
    );
    assert.is(detailOf(unopenable).code, 'SealedKeyUnavailable');
  },
);

customerBucket('storage_class and storage_acl are sent with the object', async () => {
  await uploadOutput(
    target({ key: 'class/ia.png', storage_class: 'standard_ia', acl: 'public-read' }),
    Buffer.from('x'),
    'png',
    { sealer, allowPrivate: true, until: soon() },
  );
  const stat = await reader.statObject(keys.bucket, 'class/ia.png');
  assert.is(stat.metaData['x-amz-storage-class'], 'STANDARD_IA', JSON.stringify(stat.metaData));
});

customerBucket.run();
