// The upload a request asks for: storage_* over the workspace's default, keys kept with their endpoint.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  objectKeyOf,
  regionOf,
  storeTargetOf,
  type DefaultStorage,
  type StorageParameters,
} from '../../src/domain/storage.ts';

const targets = suite('store targets');
const seal = (secret: string) => `sealed(${secret})`;
const fallback: DefaultStorage = {
  endpoint: 'https://s3.eu-west-3.amazonaws.com',
  bucket: 'default-bucket',
  region: 'eu-west-3',
  access_key_id: 'DEFAULTKEY',
  secret_access_key: 'sealed:v1:abc:def',
  updated_at: '2026-01-01T00:00:00.000Z',
};
const params = (given: Partial<StorageParameters>): StorageParameters => ({
  storage_path: 'shots/home',
  storage_acl: '',
  storage_class: 'standard',
  storage_return_location: false,
  ...given,
});

targets('the extension is appended unless the path has it', () => {
  assert.is(objectKeyOf('shots/home', 'png'), 'shots/home.png');
  assert.is(objectKeyOf('shots/home.png', 'png'), 'shots/home.png');
  assert.is(objectKeyOf('shots/home.PNG', 'png'), 'shots/home.PNG');
  assert.is(objectKeyOf('shots/home', 'jpeg'), 'shots/home.jpg');
  assert.is(objectKeyOf('notes', 'markdown'), 'notes.md');
  assert.is(objectKeyOf('shots/home.png', 'pdf'), 'shots/home.png.pdf');
});

targets("a path ending with the format's own name or an alias of it keeps it", () => {
  assert.is(objectKeyOf('shots/home.jpeg', 'jpeg'), 'shots/home.jpeg');
  assert.is(objectKeyOf('shots/home.JPG', 'jpeg'), 'shots/home.JPG');
  assert.is(objectKeyOf('notes.markdown', 'markdown'), 'notes.markdown');
  assert.is(objectKeyOf('shots/home.jpeg', 'png'), 'shots/home.jpeg.png');
  assert.is(objectKeyOf('shots/jpeg', 'jpeg'), 'shots/jpeg.jpg');
});

targets('a region is read from an AWS endpoint, else the fallback', () => {
  assert.is(regionOf('https://s3.eu-west-1.amazonaws.com'), 'eu-west-1');
  assert.is(regionOf('https://s3-ap-southeast-2.amazonaws.com'), 'ap-southeast-2');
  assert.is(regionOf('https://abc.r2.cloudflarestorage.com'), 'us-east-1');
});

targets('the services that sign with the region of their endpoint: each one read from it', () => {
  assert.is(regionOf('https://s3.dualstack.eu-central-1.amazonaws.com'), 'eu-central-1');
  assert.is(regionOf('https://s3-fips.us-gov-west-1.amazonaws.com'), 'us-gov-west-1');
  assert.is(regionOf('https://s3.eu-central-2.wasabisys.com'), 'eu-central-2');
  assert.is(regionOf('https://s3.us-west-004.backblazeb2.com'), 'us-west-004');
  assert.is(regionOf('https://s3.fr-par.scw.cloud'), 'fr-par');
  assert.is(regionOf('https://minio.example.com:9000'), 'us-east-1');
  assert.is(regionOf('https://s3.example.com'), 'us-east-1');
});

targets('only storage_path: the default storage, its sealed secret as it is', () => {
  const resolved = storeTargetOf(params({}), fallback, 'png', seal);
  assert.ok('target' in resolved);
  if (!('target' in resolved)) return;
  assert.equal(resolved.target, {
    endpoint: fallback.endpoint,
    bucket: 'default-bucket',
    region: 'eu-west-3',
    access_key_id: 'DEFAULTKEY',
    secret_access_key: 'sealed:v1:abc:def',
    key: 'shots/home.png',
    acl: '',
    storage_class: 'standard',
    return_location: false,
  });
});

targets("a request's own keys are sealed; its bucket overrides the default's", () => {
  const resolved = storeTargetOf(
    params({ storage_bucket: 'other', storage_access_key_id: 'MINE', storage_secret_access_key: 'plain' }),
    fallback,
    'webp',
    seal,
  );
  assert.ok(
    'target' in resolved &&
      resolved.target.secret_access_key === 'sealed(plain)' &&
      resolved.target.bucket === 'other' &&
      resolved.target.access_key_id === 'MINE',
  );
});

targets("the default's endpoint named again, with or without its slash, keeps the default's keys", () => {
  const resolved = storeTargetOf(
    params({ storage_endpoint: `${fallback.endpoint}/`, storage_bucket: 'other' }),
    fallback,
    'png',
    seal,
  );
  assert.ok(
    'target' in resolved && resolved.target.access_key_id === 'DEFAULTKEY' && resolved.target.bucket === 'other',
  );
});

targets("the default's keys never go to another endpoint", () => {
  const resolved = storeTargetOf(params({ storage_endpoint: 'https://elsewhere.example' }), fallback, 'png', seal);
  assert.ok('missing' in resolved);
  if ('missing' in resolved)
    assert.equal(
      resolved.missing.map((m) => m.parameter),
      ['storage_access_key_id', 'storage_secret_access_key'],
    );
});

targets('nothing given and no default: each missing part named', () => {
  const resolved = storeTargetOf(params({}), undefined, 'png', seal);
  assert.ok('missing' in resolved);
  if ('missing' in resolved)
    assert.equal(
      resolved.missing.map((m) => m.parameter),
      ['storage_endpoint', 'storage_bucket', 'storage_access_key_id', 'storage_secret_access_key'],
    );
});

targets.run();
