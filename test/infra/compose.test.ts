// infra/production/docker-compose.yml starts with infra/production/README.md's recipe as written:
// the recipe's .env sets every variable the compose file requires, and only those it reads. Compose
// cannot run here (no image can be pulled), so the file is checked as compose would read it: YAML
// with its merge keys, ${VAR:?…} required, ${VAR:-…} optional, $$ a literal dollar.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { parse } from 'yaml';

const compose = suite('infra/production: compose and its README');
const root = fileURLToPath(new URL('../../', import.meta.url));
const production = path.join(root, 'infra/production');
const composeText = readFileSync(path.join(production, 'docker-compose.yml'), 'utf8');
const readme = readFileSync(path.join(production, 'README.md'), 'utf8');

interface Service {
  image?: string;
  build?: { context: string; dockerfile: string };
  environment?: Record<string, string>;
  depends_on?: Record<string, unknown>;
  security_opt?: string[];
  read_only?: boolean;
  cap_drop?: string[];
  stop_grace_period?: string;
  volumes?: string[];
  command?: string[];
}
const file = parse(composeText, { merge: true }) as { services: Record<string, Service> };
const services = file.services;

/** The variables compose interpolates, and whether each is required (${VAR:?…} or ${VAR?…}). */
function interpolated(text: string): Map<string, boolean> {
  const found = new Map<string, boolean>();
  const uncommented = text
    .split('\n')
    .map((line) => line.replace(/(^|\s)#.*$/, ''))
    .join('\n')
    .replaceAll('$$', '');
  for (const [, name, operator] of uncommented.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)(:?[?-])?[^}]*\}/g)) {
    found.set(name, (found.get(name) ?? false) || (operator?.endsWith('?') ?? false));
  }
  for (const [, name] of uncommented.matchAll(/\$([A-Za-z_][A-Za-z0-9_]*)/g)) found.set(name, true);
  return found;
}

/** The recipe: the KEY=value lines of the README's `cat > infra/production/.env <<EOF` block. */
function recipe(): Map<string, string> {
  const block = /cat > infra\/production\/\.env <<EOF\n([\s\S]*?)\nEOF\n/.exec(readme);
  assert.ok(block, "README.md's .env recipe");
  const set = new Map<string, string>();
  for (const line of block![1].split('\n')) {
    const match = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(line);
    assert.ok(match, `a KEY=value line: ${line}`);
    set.set(match![1], match![2]);
  }
  // The recipe is the one the compose line reads.
  assert.match(
    readme,
    /docker compose -f infra\/production\/docker-compose\.yml --env-file infra\/production\/\.env up/,
  );
  return set;
}

compose('the README recipe sets every variable the compose file requires, and none it does not read', () => {
  const variables = interpolated(composeText);
  const required = [...variables].filter(([, needed]) => needed).map(([name]) => name);
  const set = recipe();
  assert.ok(required.length >= 9, `the required variables: ${required}`);
  for (const name of [
    'NATS_PASSWORD_INGRESS',
    'NATS_PASSWORD_RENDER',
    'NATS_PASSWORD_DELIVERY',
    'NATS_PASSWORD_OPERATOR',
  ])
    assert.ok(required.includes(name), `${name} is required by compose`);
  assert.equal(
    required.filter((name) => !set.has(name)),
    [],
    'every required variable is in the recipe',
  );
  assert.equal(
    [...set.keys()].filter((name) => !variables.has(name)),
    [],
    'the recipe sets nothing compose does not read',
  );
  for (const [name, value] of set) assert.ok(value.trim() !== '', `${name} has a value`);
  // SECRETS_KEY: at least 32 characters (src/config.ts), made here by openssl.
  assert.match(set.get('SECRETS_KEY')!, /^\$\(openssl rand -base64 32\)$/);
});

compose('every NATS node gets the passwords its auth file reads', () => {
  const auth = readFileSync(path.join(production, 'nats-auth.conf'), 'utf8');
  const wanted = [...new Set([...auth.matchAll(/password:\s*\$([A-Z_][A-Z0-9_]*)/g)].map((m) => m[1]))];
  assert.equal(wanted.sort(), [
    'NATS_PASSWORD_DELIVERY',
    'NATS_PASSWORD_INGRESS',
    'NATS_PASSWORD_OPERATOR',
    'NATS_PASSWORD_RENDER',
  ]);
  const nodes = Object.keys(services).filter((name) => name.startsWith('nats-'));
  assert.is(nodes.length, 3);
  for (const node of nodes)
    for (const name of wanted) assert.ok(services[node].environment?.[name], `${node} gets ${name}`);
  // Each role logs in as its own user with its own password.
  for (const role of ['ingress', 'render', 'delivery']) {
    assert.is(services[role].environment?.NATS_USER, role);
    assert.is(
      services[role].environment?.NATS_PASSWORD,
      `\${NATS_PASSWORD_${role.toUpperCase()}:?set NATS_PASSWORD_${role.toUpperCase()}}`,
    );
  }
});

compose('the default store is SeaweedFS, which the service reaches with the same keys', () => {
  assert.not.ok(/minio/i.test(composeText.replace(/#.*$/gm, '')), 'no MinIO service');
  const store = services.seaweedfs;
  assert.ok(store, 'a seaweedfs service');
  assert.match(store.image!, /^chrislusf\/seaweedfs:\d+\.\d+$/);
  for (const role of ['ingress', 'render', 'delivery']) {
    const env = services[role].environment!;
    const endpoint = new URL(env.S3_ENDPOINT);
    assert.is(endpoint.hostname, 'seaweedfs');
    assert.ok(store.command!.includes(`-s3.port=${endpoint.port}`), 'its S3 port');
    assert.is(env.S3_ACCESS_KEY, store.environment!.AWS_ACCESS_KEY_ID);
    assert.is(env.S3_SECRET_KEY, store.environment!.AWS_SECRET_ACCESS_KEY);
    assert.ok(services[role].depends_on?.seaweedfs, `${role} waits for the store`);
  }
});

compose('images are pinned; the service is built from this checkout and runs as the image test runs it', () => {
  for (const [name, service] of Object.entries(services)) {
    if (service.build) continue;
    assert.match(service.image ?? '', /:[\w.-]+$/, `${name} names a tag`);
    assert.not.match(service.image ?? '', /:latest$/, `${name} is pinned`);
  }
  for (const role of ['ingress', 'render', 'delivery']) {
    const service = services[role];
    assert.is(service.build?.dockerfile, 'infra/production/Dockerfile');
    assert.ok(existsSync(path.join(production, service.build!.context, service.build!.dockerfile)));
    assert.is(service.read_only, true, `${role}: read-only root`);
    assert.equal(service.cap_drop, ['ALL']);
    assert.is(service.stop_grace_period, '30s');
  }
  const seccomp = services.render.security_opt?.find((option) => option.startsWith('seccomp='));
  assert.ok(seccomp && existsSync(path.join(production, seccomp.slice('seccomp='.length))), 'the seccomp profile');
  assert.not.ok(services.render.security_opt?.some((option) => option.startsWith('no-new-privileges')));
});

compose("the README's image table says the Node the image runs", () => {
  const node = readFileSync(path.join(root, '.node-version'), 'utf8').trim();
  const major = node.split('.')[0];
  assert.match(readme, new RegExp(`Node ${major} \\(\`\\.node-version\`\\)`));
  assert.not.match(readme, /node:\d+-bookworm|`24-bookworm-slim`|Node 24/);
  const dockerfile = readFileSync(path.join(production, 'Dockerfile'), 'utf8');
  assert.match(dockerfile, new RegExp(`^ARG NODE_VERSION=${node.replaceAll('.', '\\.')}$`, 'm'));
  assert.match(dockerfile, /^FROM debian:bookworm-slim AS node$/m);
});

compose.run();
