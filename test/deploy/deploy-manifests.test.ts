// Renders every Kustomize overlay in deploy/ with the kubectl on this machine and checks what comes
// out: Kubernetes schemas (kubernetes-models), no unknown fields, the pod security rules (non-root,
// read-only root filesystem, no privileges), least-privilege RBAC with the admission policy that
// narrows it, the network policies, probes and metrics wiring, and an adapter config the adapter accepts.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type {
  V1ClusterRole,
  V1ConfigMap,
  V1Container,
  V1Deployment,
  V1NetworkPolicy,
  V1PodDisruptionBudget,
  V1PodSpec,
  V1RoleBinding,
  V1Service,
  V1ServiceAccount,
  V1ValidatingAdmissionPolicy,
} from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { loadAdapterConfig, type AdapterConfig } from '../../src/adapter/config.js';
import { buildPullSecretJob, JOB_DEFAULTS } from '../../src/kube/job-manifest.js';
import { admit } from '../support/admission-policy.js';
import { MODELS, unknownFields } from '../support/k8s-schema.js';
import { ServiceMonitor as ServiceMonitorModel } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const OVERLAYS = ['in-process', 'job'] as const;
type Obj = {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
};
/** The Prometheus Operator CRD, as far as it is checked here (no model of it is installed). */
interface ServiceMonitor extends Obj {
  spec: {
    selector: { matchLabels: Record<string, string> };
    namespaceSelector: { matchNames: string[] };
    endpoints: Array<{ port: string; path?: string }>;
  };
}

const CLUSTER_SCOPED = new Set([
  'ClusterRole',
  'ClusterRoleBinding',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionPolicyBinding',
]);

/** The RBAC each overlay may grant, exactly: `kind/name ns: apiGroup/resource verbs`. Change only with a reason. */
const EXPECTED_RULES: Record<(typeof OVERLAYS)[number], string[]> = {
  'in-process': [
    'ClusterRole/pullsecret-adapter-managed-secrets -: /secrets get,list,watch,create,update,delete',
    // Leader election: the one Lease, in the adapter's namespace (create cannot be limited by name).
    'Role/pullsecret-adapter-leader-election hyperfleet-system: coordination.k8s.io/leases create',
    'Role/pullsecret-adapter-leader-election hyperfleet-system: coordination.k8s.io/leases get,update',
    'Role/pullsecret-adapter-pins hyperfleet-system: /configmaps get,list,watch,create,update,delete',
  ],
  job: [
    'ClusterRole/pullsecret-adapter-managed-secrets -: /secrets get,list,watch,delete',
    'ClusterRole/pullsecret-job-managed-secrets -: /secrets get,create,update,delete',
    'Role/pullsecret-adapter-jobs hyperfleet-system: batch/jobs get,list,watch,create,delete',
    'Role/pullsecret-adapter-jobs hyperfleet-system: /secrets get,create,update,delete',
    'Role/pullsecret-adapter-jobs hyperfleet-system: /pods list',
    // Leader election: the one Lease, in the adapter's namespace (create cannot be limited by name).
    'Role/pullsecret-adapter-leader-election hyperfleet-system: coordination.k8s.io/leases create',
    'Role/pullsecret-adapter-leader-election hyperfleet-system: coordination.k8s.io/leases get,update',
    'Role/pullsecret-adapter-pins hyperfleet-system: /configmaps get,list,watch,create,update,delete',
    'Role/pullsecret-job-pins hyperfleet-system: /configmaps get,update,delete',
  ],
};

async function render(overlay: string): Promise<Obj[]> {
  const { stdout } = await promisify(execFile)(
    'kubectl',
    ['kustomize', join(ROOT, 'deploy', 'overlays', overlay)],
    { maxBuffer: 16 * 1024 * 1024 },
  ).catch((err: NodeJS.ErrnoException) => {
    throw new Error(
      err.code === 'ENOENT'
        ? 'kubectl is not installed: it renders the Kustomize overlays (kubectl kustomize)'
        : `kubectl kustomize failed: ${String(err)}`,
    );
  });
  return parseAllDocuments(stdout)
    .map((d) => d.toJS() as Obj)
    .filter((o) => o !== null);
}

function find<T = Obj>(objects: Obj[], kind: string, name?: string): T {
  const found = objects.find((o) => o.kind === kind && (name === undefined || o.metadata.name === name));
  assert.ok(found, `no ${kind}${name ? ` ${name}` : ''} rendered`);
  return found as T;
}

function podOf(deployment: V1Deployment): {
  pod: V1PodSpec;
  container: V1Container;
  labels: Record<string, string>;
} {
  const pod = deployment.spec?.template.spec;
  const container = pod?.containers[0];
  assert.ok(pod && container, 'the Deployment has a pod with a container');
  return { pod, container, labels: deployment.spec?.template.metadata?.labels ?? {} };
}

/** A locked-down pod (docs/deployment.md): non-root 1000, no escalation, read-only root, no capabilities. */
function assertLockedDown(pod: V1PodSpec | undefined, what: string): void {
  assert.ok(pod, `${what}: a pod spec`);
  assert.equal(pod.securityContext?.runAsNonRoot, true, `${what}: pod runAsNonRoot`);
  assert.equal(pod.securityContext?.seccompProfile?.type, 'RuntimeDefault', `${what}: seccomp`);
  for (const key of ['hostNetwork', 'hostPID', 'hostIPC'] as const)
    assert.notEqual(pod[key], true, `${what}: ${key}`);
  assert.ok(!(pod.volumes ?? []).some((v) => v.hostPath), `${what}: no hostPath volume`);
  for (const c of pod.containers) {
    const sc = c.securityContext ?? {};
    assert.equal(sc.runAsUser ?? pod.securityContext.runAsUser, 1000, `${what}/${c.name}: UID 1000`);
    assert.equal(
      sc.runAsNonRoot ?? pod.securityContext.runAsNonRoot,
      true,
      `${what}/${c.name}: runAsNonRoot`,
    );
    assert.equal(sc.allowPrivilegeEscalation, false, `${what}/${c.name}: allowPrivilegeEscalation`);
    assert.equal(sc.readOnlyRootFilesystem, true, `${what}/${c.name}: readOnlyRootFilesystem`);
    assert.notEqual(sc.privileged, true, `${what}/${c.name}: privileged`);
    assert.deepEqual(sc.capabilities?.drop, ['ALL'], `${what}/${c.name}: drop ALL`);
    assert.equal(sc.capabilities?.add, undefined, `${what}/${c.name}: no added capabilities`);
    assert.ok(
      c.resources?.requests?.cpu && c.resources?.requests?.memory && c.resources?.limits?.memory,
      `${what}/${c.name}: resources`,
    );
    assert.doesNotMatch(c.image ?? '', /:latest$|^[^:@]+$/, `${what}/${c.name}: pinned image tag`);
  }
}

function portNumber(container: V1Container, port: number | string | undefined): number | undefined {
  return typeof port === 'number' ? port : container.ports?.find((p) => p.name === port)?.containerPort;
}

/** The config the adapter would load: the ConfigMap's file plus the container's literal env overrides. */
async function effectiveConfig(objects: Obj[], deployment: V1Deployment): Promise<AdapterConfig> {
  const { pod, container } = podOf(deployment);
  const volume = pod.volumes?.find((v) => v.configMap);
  assert.ok(volume?.configMap?.name, 'the config comes from a ConfigMap volume');
  const configMap = find<V1ConfigMap>(objects, 'ConfigMap', volume.configMap.name);
  const args = container.args ?? [];
  const configPath = args[args.indexOf('--config') + 1] ?? '';
  const mount = container.volumeMounts?.find((m) => m.name === volume.name);
  assert.ok(
    mount && configPath.startsWith(`${mount.mountPath}/`),
    'the --config file lies in the mounted ConfigMap',
  );
  const key = configPath.slice(mount.mountPath.length + 1);
  const text = configMap.data?.[key];
  assert.ok(typeof text === 'string', `ConfigMap holds ${key}`);
  const env = Object.fromEntries(
    (container.env ?? []).flatMap((e) => (e.value === undefined ? [] : [[e.name, e.value]])),
  );
  const dir = await mkdtemp(join(tmpdir(), 'deploy-config-'));
  try {
    await writeFile(join(dir, key), text);
    return await loadAdapterConfig(join(dir, key), env);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** `port/protocol` of each port a NetworkPolicy rule list opens; `*` when a rule opens every port. */
function openPorts(
  rules: Array<{ ports?: Array<{ port?: number | string; protocol?: string }> }> | undefined,
): string[] {
  return (rules ?? []).flatMap((r) =>
    r.ports === undefined || r.ports.length === 0
      ? ['*']
      : r.ports.map((p) => `${p.port}/${p.protocol ?? 'TCP'}`),
  );
}

/** The NetworkPolicies whose podSelector selects pods with `labels`. */
function policiesFor(objects: Obj[], labels: Record<string, string>): V1NetworkPolicy[] {
  return (objects.filter((o) => o.kind === 'NetworkPolicy') as Array<V1NetworkPolicy & Obj>).filter((np) =>
    Object.entries(np.spec?.podSelector?.matchLabels ?? {}).every(([k, v]) => labels[k] === v),
  );
}

/** Service accounts (as API usernames) bound to a role that may create, update or delete Secrets. */
function secretWriters(objects: Obj[]): string[] {
  const writes = (role: V1ClusterRole) =>
    (role.rules ?? []).some(
      (r) =>
        (r.resources ?? []).includes('secrets') &&
        r.verbs.some((v) => ['create', 'update', 'delete', '*'].includes(v)),
    );
  const bindings = objects.filter(
    (o) => o.kind === 'RoleBinding' || o.kind === 'ClusterRoleBinding',
  ) as Array<V1RoleBinding & Obj>;
  return bindings
    .filter((b) => writes(find<V1ClusterRole>(objects, b.roleRef.kind, b.roleRef.name)))
    .flatMap((b) => (b.subjects ?? []).map((s) => `system:serviceaccount:${s.namespace}:${s.name}`))
    .filter((u, i, all) => all.indexOf(u) === i);
}

for (const overlay of OVERLAYS) {
  describe(`deploy/overlays/${overlay}`, () => {
    const rendered = render(overlay);

    test('renders, and every object validates against its Kubernetes schema with no unknown fields', async () => {
      const objects = await rendered;
      assert.ok(objects.length >= 8);
      for (const obj of objects) {
        const id = `${obj.kind}/${obj.metadata.name}`;
        if (obj.kind === 'ServiceMonitor') continue; // a Prometheus Operator CRD; checked in its own test below
        const entry = MODELS[`${obj.apiVersion}/${obj.kind}`];
        assert.ok(entry, `${id}: unexpected kind ${obj.apiVersion}/${obj.kind}`);
        const [Model, clientModel] = entry;
        assert.doesNotThrow(() => new Model(obj as never).validate(), `${id} does not validate`);
        assert.deepEqual(unknownFields(obj, clientModel, obj.kind), [], `${id} has unknown fields`);
        assert.equal(
          obj.metadata.namespace,
          CLUSTER_SCOPED.has(obj.kind) ? undefined : 'hyperfleet-system',
          `${id} namespace`,
        );
      }
    });

    test('Deployment: 2 replicas, a PodDisruptionBudget of 1, locked down, probes on 8080', async () => {
      const objects = await rendered;
      const deployment = find<V1Deployment>(objects, 'Deployment', 'pullsecret-adapter');
      const { pod, container, labels } = podOf(deployment);
      assert.equal(deployment.spec?.replicas, 2);
      assertLockedDown(pod, 'adapter');
      const pdb = find<V1PodDisruptionBudget>(objects, 'PodDisruptionBudget');
      assert.equal(pdb.spec?.minAvailable, 1);
      for (const [k, v] of Object.entries(pdb.spec?.selector?.matchLabels ?? {}))
        assert.equal(labels[k], v, 'the PDB selects the adapter pods');
      assert.equal(portNumber(container, container.livenessProbe?.httpGet?.port), 8080);
      assert.equal(container.livenessProbe?.httpGet?.path, '/healthz');
      assert.equal(portNumber(container, container.readinessProbe?.httpGet?.port), 8080);
      assert.equal(container.readinessProbe?.httpGet?.path, '/readyz');
      assert.ok((pod.terminationGracePeriodSeconds ?? 30) > 30, 'longer than the drain time');
      find<V1ServiceAccount>(objects, 'ServiceAccount', pod.serviceAccountName);
    });

    test('metrics: Service on 9090 to the pods, ServiceMonitor scraping /metrics', async () => {
      const objects = await rendered;
      const { container, labels } = podOf(find<V1Deployment>(objects, 'Deployment', 'pullsecret-adapter'));
      const service = find<V1Service>(objects, 'Service', 'pullsecret-adapter-metrics');
      const port = service.spec?.ports?.find((p) => p.name === 'metrics');
      assert.equal(port?.port, 9090);
      assert.equal(portNumber(container, port?.targetPort), 9090);
      for (const [k, v] of Object.entries(service.spec?.selector ?? {})) assert.equal(labels[k], v);
      const monitor = find<ServiceMonitor>(objects, 'ServiceMonitor');
      assert.equal(monitor.apiVersion, 'monitoring.coreos.com/v1');
      for (const [k, v] of Object.entries(monitor.spec.selector.matchLabels))
        assert.equal(service.metadata?.labels?.[k], v, 'the ServiceMonitor selects the Service');
      assert.deepEqual(monitor.spec.namespaceSelector.matchNames, ['hyperfleet-system']);
      assert.deepEqual(
        monitor.spec.endpoints.map((e) => [e.port, e.path ?? '/metrics']),
        [['metrics', '/metrics']],
      );
      assert.deepEqual(Object.keys(monitor.spec).sort(), ['endpoints', 'namespaceSelector', 'selector']);
      assert.doesNotThrow(
        () => new ServiceMonitorModel(monitor).validate(),
        'the ServiceMonitor matches the Prometheus Operator CRD schema',
      );
    });

    test('RBAC: exactly the expected rules, no wildcards, Secret list/watch only for the adapter (its informer), bindings to rendered service accounts', async () => {
      const objects = await rendered;
      const rules = objects
        .filter((o) => o.kind === 'Role' || o.kind === 'ClusterRole')
        .flatMap((o) =>
          ((o as V1ClusterRole).rules ?? []).flatMap((r) =>
            (r.resources ?? []).map(
              (res) =>
                `${o.kind}/${o.metadata.name} ${o.metadata.namespace ?? '-'}: ${(r.apiGroups ?? []).join('|')}/${res} ${r.verbs.join(',')}`,
            ),
          ),
        );
      assert.deepEqual(rules.sort(), [...EXPECTED_RULES[overlay]].sort());
      for (const rule of rules) {
        assert.doesNotMatch(rule, /\*/, 'no wildcard');
        assert.doesNotMatch(rule, /\/secrets .*\b(patch|deletecollection)\b/);
        // Only the adapter's informer lists and watches Secrets (label-selected); the Jobs never do.
        if (/\/secrets .*\b(list|watch)\b/.test(rule))
          assert.match(rule, /^ClusterRole\/pullsecret-adapter-managed-secrets /);
        assert.doesNotMatch(rule, /\b(escalate|bind|impersonate)\b/);
        if (rule.includes('batch/jobs'))
          assert.match(rule, /^Role\/\S+ hyperfleet-system:/, 'Jobs only in hyperfleet-system');
      }
      const accounts = new Set(
        objects
          .filter((o) => o.kind === 'ServiceAccount')
          .map((o) => `${o.metadata.namespace}/${o.metadata.name}`),
      );
      for (const binding of objects.filter(
        (o) => o.kind === 'RoleBinding' || o.kind === 'ClusterRoleBinding',
      ) as Array<V1RoleBinding & Obj>) {
        find(objects, binding.roleRef.kind, binding.roleRef.name);
        for (const s of binding.subjects ?? [])
          assert.ok(
            s.kind === 'ServiceAccount' && accounts.has(`${s.namespace}/${s.name}`),
            `${binding.metadata.name}: subject ${s.name}`,
          );
      }
    });

    test('admission policy: every service account that may write Secrets is held to managed Secrets', async () => {
      const objects = await rendered;
      const policy = find<V1ValidatingAdmissionPolicy & Obj>(objects, 'ValidatingAdmissionPolicy');
      const binding = find<Obj & { spec: { policyName: string; validationActions: string[] } }>(
        objects,
        'ValidatingAdmissionPolicyBinding',
      );
      assert.equal(binding.spec.policyName, policy.metadata.name);
      assert.ok(binding.spec.validationActions.includes('Deny'));
      const writers = secretWriters(objects);
      assert.deepEqual(
        writers.sort(),
        (overlay === 'job' ? ['pullsecret-adapter', JOB_DEFAULTS.serviceAccountName] : ['pullsecret-adapter'])
          .map((n) => `system:serviceaccount:hyperfleet-system:${n}`)
          .sort(),
      );
      const unlabelled = {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'not-ours', namespace: 'clusters-x' },
      };
      for (const username of writers) {
        const verdict = admit(policy, {
          operation: 'CREATE',
          username,
          resource: { group: '', version: 'v1', resource: 'secrets' },
          object: unlabelled,
        });
        assert.deepEqual(
          [verdict.matched, verdict.allowed],
          [true, false],
          `${username} may not create an unlabelled Secret`,
        );
      }
    });

    test('network policy: the adapter takes in only health and metrics, and sends only to the ports it uses', async () => {
      const objects = await rendered;
      const deployment = find<V1Deployment>(objects, 'Deployment', 'pullsecret-adapter');
      const { labels } = podOf(deployment);
      const config = await effectiveConfig(objects, deployment);
      const [policy, ...more] = policiesFor(objects, labels);
      assert.ok(policy && more.length === 0, 'exactly one NetworkPolicy selects the adapter pods');
      assert.deepEqual(policy.spec?.policyTypes, ['Ingress', 'Egress']);
      assert.deepEqual(
        openPorts(policy.spec?.ingress).sort(),
        [`${config.server.healthPort}/TCP`, `${config.server.metricsPort}/TCP`].sort(),
      );
      const egress = openPorts(policy.spec?.egress);
      assert.ok(!egress.includes('*'), 'no egress rule opens every port');
      const api = new URL(config.hyperfleetApi.baseUrl);
      const apiPort = api.port === '' ? (api.protocol === 'https:' ? '443' : '80') : api.port;
      for (const needed of ['53/UDP', '53/TCP', '443/TCP', '6443/TCP', `${apiPort}/TCP`])
        assert.ok(egress.includes(needed), `egress to ${needed}`);
    });

    if (overlay === 'job') {
      test('network policy: the Jobs take in nothing and send only to DNS, HTTPS and the metadata server', async () => {
        const objects = await rendered;
        const job = buildPullSecretJob({
          clusterId: 'cls-1',
          generation: 1,
          image: 'quay.io/openshift-hyperfleet/pull-secret:0.1.0',
          namespace: JOB_DEFAULTS.namespace,
          env: {},
        });
        const [policy, ...more] = policiesFor(objects, job.spec?.template.metadata?.labels ?? {});
        assert.ok(policy && more.length === 0, 'exactly one NetworkPolicy selects the Job pods');
        assert.deepEqual(policy.spec?.policyTypes, ['Ingress', 'Egress']);
        assert.deepEqual(policy.spec?.ingress ?? [], [], 'no ingress at all');
        assert.deepEqual(
          openPorts(policy.spec?.egress).sort(),
          ['53/UDP', '53/TCP', '5353/UDP', '5353/TCP', '443/TCP', '6443/TCP', '80/TCP', '988/TCP'].sort(),
        );
      });
    }

    test('Workload Identity: every service account names a Google service account, no key is mounted', async () => {
      const objects = await rendered;
      for (const sa of objects.filter((o) => o.kind === 'ServiceAccount')) {
        assert.match(
          sa.metadata.annotations?.['iam.gke.io/gcp-service-account'] ?? '',
          /^[a-z][a-z0-9-]+@[A-Za-z0-9_-]+\.iam\.gserviceaccount\.com$/,
        );
      }
      const { pod } = podOf(find<V1Deployment>(objects, 'Deployment'));
      assert.ok(!JSON.stringify(pod).includes('GOOGLE_APPLICATION_CREDENTIALS'));
      assert.ok(!(pod.volumes ?? []).some((v) => v.secret), 'no Secret volume (no key file)');
    });

    test(`the ConfigMap holds a config the adapter accepts, in ${overlay} mode, matching the Deployment`, async () => {
      const objects = await rendered;
      const deployment = find<V1Deployment>(objects, 'Deployment', 'pullsecret-adapter');
      const config = await effectiveConfig(objects, deployment);
      assert.equal(config.execution.mode, overlay);
      assert.equal(config.store.type, 'gcp');
      assert.equal(config.kubernetes.target, 'api');
      const { container } = podOf(deployment);
      assert.equal(portNumber(container, 'health'), config.server.healthPort);
      assert.equal(portNumber(container, 'metrics'), config.server.metricsPort);
      if (overlay === 'job') {
        assert.equal(config.execution.job.image, container.image, "Jobs run the adapter's image");
        assert.equal(config.execution.job.namespace, JOB_DEFAULTS.namespace);
        const jobSa = find(objects, 'ServiceAccount', JOB_DEFAULTS.serviceAccountName);
        assert.equal(jobSa.metadata.namespace, config.execution.job.namespace);
        const job = buildPullSecretJob({
          clusterId: 'cls-1',
          generation: 1,
          image: config.execution.job.image,
          namespace: config.execution.job.namespace,
          env: {},
        });
        assertLockedDown(job.spec?.template.spec, 'Job');
      }
    });
  });
}
