// The ValidatingAdmissionPolicy of deploy/components/admission-policy, evaluated with the project's CEL
// library against sample admission requests: the Secrets the adapter and the Jobs really write (built
// by src/kube) pass; unlabelled Secrets, adoption and dropping the label are refused; nobody else's
// requests are touched.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type {
  V1Secret,
  V1ValidatingAdmissionPolicy,
  V1ValidatingAdmissionPolicyBinding,
} from '@kubernetes/client-node';
import {
  ValidatingAdmissionPolicy,
  ValidatingAdmissionPolicyBinding,
} from 'kubernetes-models/admissionregistration.k8s.io/v1';
import { parseAllDocuments } from 'yaml';
import { buildJobDataSecret, JOB_DEFAULTS } from '../../src/kube/job-manifest.js';
import { buildPullSecretManifest } from '../../src/kube/pull-secret-manifest.js';
import { admit, type AdmissionRequest } from '../support/admission-policy.js';
import { VALID_PULL_SECRET } from '../support/fixtures.js';

const FILE = fileURLToPath(
  new URL('../../deploy/components/admission-policy/admission-policy.yaml', import.meta.url),
);
const documents = parseAllDocuments(readFileSync(FILE, 'utf8')).map((d) => d.toJS() as { kind: string });
const policy = documents.find((d) => d.kind === 'ValidatingAdmissionPolicy') as V1ValidatingAdmissionPolicy;
const binding = documents.find(
  (d) => d.kind === 'ValidatingAdmissionPolicyBinding',
) as V1ValidatingAdmissionPolicyBinding;

const SA = (name: string) => `system:serviceaccount:${JOB_DEFAULTS.namespace}:${name}`;
const ADAPTER = SA('pullsecret-adapter');
const JOB = SA(JOB_DEFAULTS.serviceAccountName);
const SECRETS = { group: '', version: 'v1', resource: 'secrets' };
const CLUSTER = '019466a0-8f8e-7abc-9def-0123456789ab';
const bytes = new TextEncoder().encode(VALID_PULL_SECRET);

/** The Secret the Secret writer creates in the cluster's management namespace. */
const pullSecret = (): V1Secret =>
  buildPullSecretManifest({
    clusterId: CLUSTER,
    pullSecret: bytes,
    secretPath: 'projects/p/secrets/s',
    secretVersion: '1',
  });
/** The Job's data Secret, as the Job launcher creates it in hyperfleet-system. */
const dataSecret = (): V1Secret =>
  buildJobDataSecret({ clusterId: CLUSTER, generation: 3, pullSecret: bytes });
/** Someone else's Secret: no managed-by label, or another manager's. */
const foreign = (labels?: Record<string, string>): V1Secret => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: {
    name: `${CLUSTER}-pull-secret`,
    namespace: `clusters-${CLUSTER}`,
    ...(labels ? { labels } : {}),
  },
  type: 'Opaque',
  data: {},
});
const relabelled = (secret: V1Secret, labels: Record<string, string> | undefined): V1Secret => ({
  ...secret,
  metadata: { ...secret.metadata, labels },
});

const request = (
  username: string,
  operation: AdmissionRequest['operation'],
  objects: { object?: V1Secret; oldObject?: V1Secret },
): AdmissionRequest => ({
  operation,
  username,
  resource: SECRETS,
  namespace: (objects.object ?? objects.oldObject)?.metadata?.namespace ?? '',
  name: (objects.object ?? objects.oldObject)?.metadata?.name ?? '',
  ...objects,
});

describe('ValidatingAdmissionPolicy: the pull-secret service accounts write only managed Secrets', () => {
  test('the policy and its binding validate against the Kubernetes schema, deny, and fail closed', () => {
    assert.doesNotThrow(() => new ValidatingAdmissionPolicy(policy as never).validate());
    assert.doesNotThrow(() => new ValidatingAdmissionPolicyBinding(binding as never).validate());
    assert.equal(binding.spec?.policyName, policy.metadata?.name);
    assert.ok(binding.spec?.validationActions?.includes('Deny'), 'refusals are enforced, not only audited');
    assert.equal(policy.spec?.failurePolicy, 'Fail');
  });

  test('allows what the adapter and the Jobs write: labelled pull secrets and data Secrets', () => {
    for (const user of [ADAPTER, JOB]) {
      for (const secret of [pullSecret(), dataSecret()]) {
        const what = `${user} ${secret.metadata?.name}`;
        assert.deepEqual(
          admit(policy, request(user, 'CREATE', { object: secret })),
          { matched: true, allowed: true },
          `create ${what}`,
        );
        assert.deepEqual(
          admit(policy, request(user, 'UPDATE', { oldObject: secret, object: secret })),
          { matched: true, allowed: true },
          `update ${what}`,
        );
        assert.deepEqual(
          admit(policy, request(user, 'DELETE', { oldObject: secret })),
          { matched: true, allowed: true },
          `delete ${what}`,
        );
      }
    }
  });

  test('refuses unlabelled or foreign Secrets, adopting one, and dropping the label', () => {
    const refusals: Array<[string, AdmissionRequest, RegExp]> = [
      [
        'create without labels',
        request(ADAPTER, 'CREATE', { object: foreign() }),
        /write only Secrets labelled managed-by=hyperfleet/,
      ],
      [
        'create with another manager',
        request(JOB, 'CREATE', { object: foreign({ 'managed-by': 'someone-else' }) }),
        /write only Secrets labelled/,
      ],
      [
        'create with other labels only',
        request(ADAPTER, 'CREATE', { object: foreign({ 'cluster-id': CLUSTER }) }),
        /write only Secrets labelled/,
      ],
      [
        'adopt an unlabelled Secret',
        request(ADAPTER, 'UPDATE', { oldObject: foreign(), object: pullSecret() }),
        /change or delete only Secrets that already carry managed-by=hyperfleet/,
      ],
      [
        'drop the label',
        request(JOB, 'UPDATE', {
          oldObject: pullSecret(),
          object: relabelled(pullSecret(), { 'cluster-id': CLUSTER }),
        }),
        /write only Secrets labelled/,
      ],
      [
        'drop every label',
        request(ADAPTER, 'UPDATE', { oldObject: dataSecret(), object: relabelled(dataSecret(), undefined) }),
        /write only Secrets labelled/,
      ],
      [
        'delete an unlabelled Secret',
        request(ADAPTER, 'DELETE', { oldObject: foreign() }),
        /change or delete only Secrets that already carry/,
      ],
      [
        'delete a foreign Secret',
        request(JOB, 'DELETE', { oldObject: foreign({ 'managed-by': 'helm' }) }),
        /change or delete only/,
      ],
    ];
    for (const [what, req, message] of refusals) {
      const verdict = admit(policy, req);
      assert.equal(verdict.allowed, false, what);
      assert.match(verdict.message ?? '', message, what);
    }
  });

  test('leaves everybody else and every other resource alone', () => {
    for (const user of [
      'system:admin',
      SA('pullsecret-adapter-other'),
      'system:serviceaccount:other-namespace:pullsecret-adapter',
      'kube:admin',
    ]) {
      assert.deepEqual(
        admit(policy, request(user, 'CREATE', { object: foreign() })),
        { matched: false, allowed: true },
        user,
      );
      assert.deepEqual(
        admit(policy, request(user, 'DELETE', { oldObject: foreign() })),
        { matched: false, allowed: true },
        user,
      );
    }
    const configMap = {
      ...request(ADAPTER, 'CREATE', { object: foreign() }),
      resource: { group: '', version: 'v1', resource: 'configmaps' },
    };
    assert.deepEqual(admit(policy, configMap), { matched: false, allowed: true });
    // Reads are not admission requests; CONNECT is not matched.
    assert.deepEqual(admit(policy, request(ADAPTER, 'CONNECT', { object: foreign() })), {
      matched: false,
      allowed: true,
    });
  });
});
