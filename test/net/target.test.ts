// The URL gate: each spelling of a private target refused with the code a customer sees.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ServiceError } from '../../src/errors.ts';
import { checkTargetUrl, resolvePublic, type LookupFn, type TargetPolicy } from '../../src/net/target.ts';

const target = suite('net/target');

const lookupOf =
  (answers: Record<string, string[]>): LookupFn =>
  async (hostname) => {
    const addresses = answers[hostname];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };

const lookup = lookupOf({
  'example.com': ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'],
  'loopback.test': ['127.0.0.1'],
  'mixed.test': ['93.184.215.14', '10.0.0.7'],
  'mixed6.test': ['2606:4700::1111', 'fd00::1'],
  'empty.test': [],
});

/** The ServiceError checkTargetUrl throws for `raw`, or fails the test. */
async function rejection(raw: string, opts: TargetPolicy = { allowPrivate: false, lookup }): Promise<ServiceError> {
  const error: unknown = await checkTargetUrl(raw, opts).then(
    () => `${raw} was let through`,
    (e: unknown) => e,
  );
  assert.instance(error, ServiceError, String(error));
  return error as ServiceError;
}

const notAllowed = [
  'http://2130706433/',
  'http://0x7f.1/',
  'http://0177.0.0.1/',
  'http://127.1/',
  'http://127.0.0.1./',
  'http://[::ffff:127.0.0.1]/',
  'http://[::ffff:7f00:1]/',
  'http://[::1]/',
  'http://[64:ff9b::7f00:1]/',
  'http://[2002:7f00:1::]/',
  'http://[fe80::1]/',
  'http://[fd00::1]/',
  'HTTP://LOCALHOST/',
  'http://localhost./',
  'http://foo.localhost/',
  'https://a.b.LocalHost:8443/',
  'http://169.254.169.254/latest/meta-data/',
  'http://10.0.0.1/',
  'http://100.64.0.1/',
  'http://0.0.0.0/',
  'http://0/',
  'http://192.168.1.1:8080/',
  'file:///etc/passwd',
  'javascript:alert(1)',
  'ftp://example.com/',
  'data:text/html,hi',
  'ws://example.com/',
  'http://loopback.test/',
  'http://mixed.test/',
  'http://mixed6.test/',
];
for (const raw of notAllowed) {
  target(`${raw} → url_not_allowed`, async () => {
    const error = await rejection(raw);
    assert.is(error.code, 'url_not_allowed');
    const [detail] = error.details.error_details as Array<{ parameter: string; message: string }>;
    assert.is(detail.parameter, 'url');
    assert.type(detail.message, 'string');
  });
}

for (const raw of [
  'not a url',
  '/relative/path',
  'http://',
  'example.com',
  'http://user:pass@example.com/',
  'http://user@example.com/',
]) {
  target(`${raw} → request_not_valid`, async () => {
    const error = await rejection(raw);
    assert.is(error.code, 'request_not_valid');
    assert.equal((error.details.error_details as Array<{ parameter: string }>)[0].parameter, 'url');
  });
}

target('names that do not resolve → name_not_resolved', async () => {
  assert.is((await rejection('http://nowhere.test/')).code, 'name_not_resolved');
  assert.is((await rejection('http://empty.test/')).code, 'name_not_resolved');
  // No injected lookup: the .invalid TLD never resolves (RFC 6761).
  const error = await rejection('http://shutterbus-check.invalid/', { allowPrivate: false });
  assert.is(error.code, 'name_not_resolved');
  // Which of a request's addresses it was, as a refusal says it.
  try {
    await checkTargetUrl('https://nowhere.test/', { allowPrivate: false, lookup, param: 'storage_endpoint' });
    assert.unreachable();
  } catch (error) {
    assert.equal((error as ServiceError).details, {
      error_details: [{ parameter: 'storage_endpoint', message: 'nowhere.test does not resolve' }],
    });
  }
});

target('error_details name the parameter given', async () => {
  try {
    await checkTargetUrl('file:///etc/passwd', { allowPrivate: false, param: 'webhook_url' });
    assert.unreachable();
  } catch (error) {
    assert.equal((error as ServiceError).details, {
      error_details: [{ parameter: 'webhook_url', message: 'the file scheme is not allowed; use http or https' }],
    });
  }
});

target('public URLs pass and come back parsed', async () => {
  const url = await checkTargetUrl('HTTPS://Example.COM:443/a?b=c#d', { allowPrivate: false, lookup });
  assert.is(url.href, 'https://example.com/a?b=c#d');
  assert.is((await checkTargetUrl('http://8.8.8.8/', { allowPrivate: false, lookup })).hostname, '8.8.8.8');
  assert.is((await checkTargetUrl('http://[2606:4700::1111]/', { allowPrivate: false })).hostname, '[2606:4700::1111]');
});

target('allowPrivate lets private targets through, but not other schemes', async () => {
  const opts = { allowPrivate: true, lookup };
  assert.is((await checkTargetUrl('http://127.0.0.1:1234/', opts)).port, '1234');
  assert.is((await checkTargetUrl('http://loopback.test/', opts)).hostname, 'loopback.test');
  assert.is((await rejection('file:///etc/passwd', opts)).code, 'url_not_allowed');
  assert.is((await rejection('http://nowhere.test/', opts)).code, 'name_not_resolved');
});

target('resolvePublic pins the first checked address, asking DNS once', async () => {
  let calls = 0;
  const counting: LookupFn = async (hostname, options) => {
    calls++;
    return lookup(hostname, options);
  };
  assert.is(await resolvePublic('example.com', { allowPrivate: false, lookup: counting }), '93.184.215.14');
  assert.is(calls, 1);
  assert.is(await resolvePublic('[2606:4700::1111]', { allowPrivate: false, lookup: counting }), '2606:4700::1111');
  assert.is(await resolvePublic('0x7f.1', { allowPrivate: true, lookup: counting }), '127.0.0.1');
  assert.is(calls, 1);
});

target('an injected isPublic decides which addresses count as public (tests only)', async () => {
  const opts = { allowPrivate: false, lookup, isPublic: (ip: string) => ip === '127.0.0.1' };
  assert.is(await resolvePublic('loopback.test', opts), '127.0.0.1');
  await resolvePublic('example.com', opts).then(
    () => assert.unreachable(),
    (error: ServiceError) => assert.is(error.code, 'url_not_allowed'),
  );
});

target.run();
