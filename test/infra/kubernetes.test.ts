// The Kubernetes manifests (infra/kubernetes/): every file parses, every object is valid for
// Kubernetes, KEDA and the Prometheus Operator (the kubernetes-models schemas: types and required
// fields), `kubectl kustomize` builds the base and each overlay, and every environment variable,
// port, probe path, stream, consumer and metric they name is one the code defines.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ScaledObject } from '@kubernetes-models/keda/keda.sh/v1alpha1';
import { PrometheusRule, ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';
import { Deployment } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ConfigMap, Namespace, Secret, Service } from 'kubernetes-models/v1';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { parseAllDocuments } from 'yaml';
import { loadConfig } from '../../src/config.ts';
import { names } from '../../src/jetstream/topology.ts';
import { metrics } from '../../src/metrics.ts';
import { settings } from '../../src/settings.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const dir = path.join(root, 'infra/kubernetes');
const overlays = readdirSync(path.join(dir, 'overlays')).map((name) => `overlays/${name}`);

/** Every model the manifests may use, by apiVersion and kind; any other kind fails the test. */
const models: Record<string, { new (data: any): { validate(): void } }> = {
  'v1/ConfigMap': ConfigMap,
  'v1/Secret': Secret,
  'v1/Service': Service,
  'v1/Namespace': Namespace,
  'apps/v1/Deployment': Deployment,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'keda.sh/v1alpha1/ScaledObject': ScaledObject,
  'monitoring.coreos.com/v1/ServiceMonitor': ServiceMonitor,
  'monitoring.coreos.com/v1/PrometheusRule': PrometheusRule,
};

type Manifest = Record<string, any>;

function yamlFiles(folder: string): string[] {
  return readdirSync(folder).flatMap((entry) => {
    const full = path.join(folder, entry);
    if (statSync(full).isDirectory()) return yamlFiles(full);
    return /\.ya?ml$/.test(entry) ? [full] : [];
  });
}

/** Every document of a YAML text; a syntax error or warning fails, naming where. */
function parse(text: string, where: string): Manifest[] {
  return parseAllDocuments(text).map((document, index) => {
    const problems = [...document.errors, ...document.warnings];
    if (problems.length > 0) throw new Error(`${where}, document ${index + 1}: ${problems[0].message}`);
    return document.toJS() as Manifest;
  });
}

/** The problems of one object against its schema: none when valid. */
function validate(object: Manifest, where: string): string[] {
  const key = `${object.apiVersion}/${object.kind}`;
  const Model = models[key];
  if (!Model) return [`${where}: ${key} is not a kind these manifests are checked for`];
  try {
    new Model(object).validate();
    return [];
  } catch (err) {
    return [`${where}: ${object.kind} ${object.metadata?.name}: ${(err as Error).message}`];
  }
}

/** Whether kubectl is here; `make test` on a machine without it skips only the builds, saying so. */
const kubectl = (() => {
  try {
    execFileSync('kubectl', ['version', '--client'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

function build(target: string): Manifest[] {
  const output = execFileSync('kubectl', ['kustomize', path.join(dir, target)], { encoding: 'utf8' });
  return parse(output, `kubectl kustomize ${target}`);
}

/** The objects to check: the built base and overlays, or the base's own files without kubectl. */
function objects(): { target: string; items: Manifest[] }[] {
  if (!kubectl) {
    const items = yamlFiles(path.join(dir, 'base'))
      .filter((file) => !file.endsWith('kustomization.yaml'))
      .flatMap((file) => parse(readFileSync(file, 'utf8'), file));
    return [{ target: 'base (its files)', items }];
  }
  return ['base', ...overlays].map((target) => ({ target, items: build(target) }));
}

/** The environment variables the service (or Node, for it) reads: the settings table (src/settings.ts). */
function variablesTheCodeReads(): Set<string> {
  return new Set(settings.flatMap((setting) => setting.names));
}

const k8s = suite('Kubernetes manifests');

k8s('every YAML file under infra/kubernetes parses, and every object in the base and overlays is valid', () => {
  const problems: string[] = [];
  for (const file of yamlFiles(dir)) {
    const documents = parse(readFileSync(file, 'utf8'), file);
    const relative = path.relative(dir, file);
    // The Helm values and the kustomizations are not objects of the cluster.
    if (relative === 'nats-values.yaml' || relative.endsWith('kustomization.yaml')) continue;
    for (const object of documents) problems.push(...validate(object, relative));
  }
  assert.equal(problems, []);
});

k8s('kubectl kustomize builds the base and each overlay into valid objects', () => {
  if (!kubectl) {
    console.log('  kubectl is not installed: the kustomize builds are skipped (the files were validated above)');
    return;
  }
  assert.ok(overlays.includes('overlays/production'), 'a production overlay');
  for (const target of ['base', ...overlays]) {
    const items = build(target);
    const kinds = new Set(items.map((item) => item.kind));
    for (const kind of ['Deployment', 'Service', 'PodDisruptionBudget', 'HorizontalPodAutoscaler', 'ScaledObject'])
      assert.ok(kinds.has(kind), `${target} has a ${kind}`);
    assert.equal(
      items.flatMap((item) => validate(item, target)),
      [],
    );
  }
});

k8s('one Deployment per role, each with probes, drain time, non-root and no capability', () => {
  const codeConfig = loadConfig({});
  for (const { target, items } of objects()) {
    const deployments = items.filter((item) => item.kind === 'Deployment');
    const roles = deployments.map((deployment) => {
      const [container] = deployment.spec.template.spec.containers;
      const env = Object.fromEntries(container.env.map((entry: Manifest) => [entry.name, entry]));
      return env.ROLES.value as string;
    });
    assert.equal(roles.sort(), ['delivery', 'ingress', 'render'], `${target}: one Deployment per role`);
    for (const deployment of deployments) {
      const where = `${target}: ${deployment.metadata.name}`;
      const pod = deployment.spec.template.spec;
      const [container] = pod.containers;
      assert.is(pod.securityContext.runAsNonRoot, true, `${where}: runAsNonRoot`);
      assert.ok(pod.securityContext.runAsUser > 0, `${where}: a non-root uid`);
      assert.equal(container.securityContext.capabilities.drop, ['ALL'], `${where}: every capability dropped`);
      assert.is(container.securityContext.readOnlyRootFilesystem, true, `${where}: read-only root`);
      assert.ok(
        container.volumeMounts.some((mount: Manifest) => mount.mountPath === '/tmp'),
        `${where}: a writable /tmp`,
      );
      // The consume loops give in-flight work 10 s (src/jetstream/consume.ts); a sync caller waits up to 94 s.
      assert.ok(pod.terminationGracePeriodSeconds > 30, `${where}: a grace period longer than the drain`);
      assert.ok(container.resources.requests.cpu && container.resources.requests.memory, `${where}: requests`);
      assert.ok(container.resources.limits.memory, `${where}: a memory limit`);
      const port = container.ports.find((entry: Manifest) => entry.name === 'http');
      const envPort = container.env.find((entry: Manifest) => entry.name === 'PORT')?.value;
      assert.is(Number(envPort ?? codeConfig.port), port.containerPort, `${where}: the container port is PORT`);
      assert.is(container.livenessProbe.httpGet.path, '/healthz', `${where}: liveness`);
      assert.is(container.readinessProbe.httpGet.path, '/readyz', `${where}: readiness`);
      assert.is(container.env.find((entry: Manifest) => entry.name === 'HOST')?.value, '0.0.0.0', `${where}: HOST`);
    }
    const render = deployments.find((deployment) => deployment.metadata.name.endsWith('render'))!.spec.template.spec;
    assert.equal(
      render.securityContext.seccompProfile,
      { type: 'Localhost', localhostProfile: 'shutterbus/chromium-seccomp.json' },
      `${target}: render pods run with the Chromium seccomp profile`,
    );
    const shm = render.volumes.find((volume: Manifest) => volume.name === 'shm');
    assert.is(shm.emptyDir.medium, 'Memory', `${target}: /dev/shm in memory`);
    assert.ok(
      render.containers[0].volumeMounts.some(
        (mount: Manifest) => mount.mountPath === '/dev/shm' && mount.name === 'shm',
      ),
    );
    assert.ok(
      items.some((item) => item.kind === 'PodDisruptionBudget'),
      `${target}: a PodDisruptionBudget`,
    );
  }
});

k8s('every variable, port, probe path, stream, consumer and metric they name is the code’s', () => {
  const known = variablesTheCodeReads();
  const healthPaths = readFileSync(path.join(root, 'src/http/health.ts'), 'utf8');
  const exported = new Set([
    ...Object.values(metrics).map((metric) => metric.name),
    ...[
      ...readFileSync(path.join(root, 'src/jetstream/queue-metrics.ts'), 'utf8').matchAll(/'(shutterbus_[a-z_]+)'/g),
    ].map((match) => match[1]),
  ]);
  for (const { target, items } of objects()) {
    const problems: string[] = [];
    const byName = (kind: string, name: string) =>
      items.find((item) => item.kind === kind && item.metadata.name === name);
    for (const deployment of items.filter((item) => item.kind === 'Deployment')) {
      const [container] = deployment.spec.template.spec.containers;
      const where = `${target}: ${deployment.metadata.name}`;
      for (const entry of container.env)
        if (!known.has(entry.name)) problems.push(`${where}: ${entry.name} is no variable of src/settings.ts`);
      for (const source of container.envFrom ?? []) {
        const ref = source.configMapRef ?? source.secretRef;
        const object = byName(source.configMapRef ? 'ConfigMap' : 'Secret', ref.name);
        // A Secret left out of the overlay (created out of band) is checked where the base has it.
        for (const name of Object.keys(object?.data ?? object?.stringData ?? {}))
          if (!known.has(name)) problems.push(`${where}: ${ref.name}'s ${name} is no variable of src/settings.ts`);
      }
      for (const probe of [container.livenessProbe, container.readinessProbe, container.startupProbe])
        if (!healthPaths.includes(`'${probe.httpGet.path}'`))
          problems.push(`${where}: ${probe.httpGet.path} is no route of src/http/health.ts`);
    }
    for (const scaled of items.filter((item) => item.kind === 'ScaledObject')) {
      const deployment = byName('Deployment', scaled.spec.scaleTargetRef.name);
      if (!deployment) problems.push(`${target}: ${scaled.metadata.name} scales no Deployment here`);
      for (const trigger of scaled.spec.triggers) {
        const { stream, consumer, lagThreshold, account } = trigger.metadata;
        assert.is(trigger.type, 'nats-jetstream');
        assert.is(account, '$G', "the per-role users live in NATS's global account");
        const pair = [
          [names.renderStream, names.renderConsumer],
          [names.deliveryStream, names.deliveryConsumer],
        ].find(([s, c]) => s === stream && c === consumer);
        if (!pair) problems.push(`${target}: ${stream}/${consumer} is no work queue of src/jetstream/topology.ts`);
        if (stream === names.renderStream) {
          // The lag a worker takes on: what it renders at once.
          const env = deployment?.spec.template.spec.containers[0].env ?? [];
          const concurrency = env.find((entry: Manifest) => entry.name === 'RENDER_CONCURRENCY')?.value;
          assert.is(lagThreshold, concurrency, `${target}: the render lag threshold is RENDER_CONCURRENCY`);
        }
      }
    }
    const rules = items.filter((item) => item.kind === 'PrometheusRule');
    assert.ok(rules.length > 0, `${target}: alert rules`);
    const alerts = rules.flatMap((rule) => rule.spec.groups.flatMap((group: Manifest) => group.rules));
    for (const alert of alerts) {
      for (const [metric] of (alert.expr as string).matchAll(/shutterbus_[a-z_]+/g))
        if (!exported.has(metric)) problems.push(`${target}: ${alert.alert} reads ${metric}, which nothing exports`);
    }
    const read = alerts.map((alert) => alert.expr).join('\n');
    for (const metric of [
      'shutterbus_queue_waiting',
      'shutterbus_renders_total',
      'shutterbus_webhook_dead_letters_total',
      'shutterbus_browser_restarts_total',
    ])
      assert.ok(read.includes(metric), `${target}: an alert on ${metric}`);
    const service = items.find((item) => item.kind === 'ServiceMonitor');
    assert.ok(service, `${target}: a ServiceMonitor`);
    assert.equal(problems, []);
  }
});

k8s('the NATS Helm values: a 3-node JetStream cluster with a user per role and the monitoring port', () => {
  const [values] = parse(readFileSync(path.join(dir, 'nats-values.yaml'), 'utf8'), 'nats-values.yaml');
  assert.is(values.config.cluster.enabled, true);
  assert.is(values.config.cluster.replicas, 3);
  assert.is(values.config.jetstream.enabled, true);
  assert.is(values.config.monitor.enabled, true);
  assert.is(values.config.monitor.port, 8222);
  const users = values.config.merge.authorization.users.map((user: Manifest) => user.user);
  assert.equal(users, ['ingress', 'render', 'delivery', 'operator']);
  // The same users and permissions as the compose deployment's NATS (infra/production/nats-auth.conf).
  const auth = readFileSync(path.join(root, 'infra/production/nats-auth.conf'), 'utf8');
  for (const user of users) assert.match(auth, new RegExp(`user: ${user},`));
  const service = values.config.merge.authorization.users[0].permissions;
  for (const subject of [...service.publish.allow, ...service.publish.deny, ...service.subscribe.allow])
    assert.ok(auth.includes(`"${subject}"`), `${subject} as in nats-auth.conf`);
  // Each password from the Secret the Deployments read theirs from.
  for (const user of values.config.merge.authorization.users) {
    const variable = `NATS_PASSWORD_${user.user.toUpperCase()}`;
    assert.is(user.password, `<< $${variable} >>`);
    assert.equal(values.container.env[variable].valueFrom.secretKeyRef, {
      name: 'shutterbus-nats-users',
      key: variable,
    });
  }
  const endpoints = objects()
    .flatMap(({ items }) => items.filter((item) => item.kind === 'ScaledObject'))
    .flatMap((scaled) =>
      scaled.spec.triggers.map((trigger: Manifest) => trigger.metadata.natsServerMonitoringEndpoint),
    );
  for (const endpoint of endpoints) assert.ok(endpoint.endsWith(`:${values.config.monitor.port}`), endpoint);
});

k8s.run();
