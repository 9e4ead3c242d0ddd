// One source of truth for two install paths: the Helm chart (charts/pull-secret) and the Kustomize
// overlays (deploy/) must render the same objects for every documented case, each overlay (and each
// KEDA component on each overlay) against the chart with the matching values. Only what the tools
// add themselves is set aside: Helm's labels, and the hash suffix of the config ConfigMap's name
// (each tool hashes the file in its own way), whose adapter.yaml is compared as parsed YAML, and the
// whitespace of CEL expressions: kustomize re-serializes a folded scalar whose lines are more indented
// with an extra blank line (YAML 1.2 keeps a single line feed there:
// https://yaml.org/spec/1.2.2/#813-folded-style), which CEL ignores.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { parse } from 'yaml';
import { helmTemplate, kustomize, kustomizeWith, NAMESPACE, ROOT, type K8sObject } from '../support/helm.js';

/** The labels Helm adds (the chart's helmLabels); nothing else is ignored. */
const HELM_LABELS = ['helm.sh/chart', 'app.kubernetes.io/managed-by', 'app.kubernetes.io/instance'];
const CONFIG_NAME = /^(pullsecret-adapter-config)-[a-z0-9]{10}$/;
/** What the overlays hard-code, given to the chart as values. */
const OVERLAY_VALUES = {
  identity: { gcp: { serviceAccount: 'pullsecret-manager@PLATFORM_PROJECT.iam.gserviceaccount.com' } },
};

interface Case {
  overlay: 'in-process' | 'job' | 'in-process-shares';
  component?: 'keda-pubsub' | 'keda-rabbitmq';
  values: Record<string, unknown>;
}
const CASES: Case[] = [
  { overlay: 'in-process', values: {} },
  { overlay: 'job', values: { execution: { mode: 'job' } } },
  { overlay: 'in-process-shares', values: { shares: { enabled: true } } },
  ...(['in-process', 'job'] as const).flatMap((overlay): Case[] => {
    const execution = overlay === 'job' ? { execution: { mode: 'job' } } : {};
    return [
      {
        overlay,
        component: 'keda-pubsub',
        values: { ...execution, keda: { enabled: true, pubsub: { projectId: 'PLATFORM_PROJECT' } } },
      },
      {
        overlay,
        component: 'keda-rabbitmq',
        values: { ...execution, broker: { type: 'rabbitmq' }, keda: { enabled: true } },
      },
    ];
  }),
];

/** The overlay, with the component added when the case has one. */
function renderOverlay({ overlay, component }: Case): Promise<K8sObject[]> {
  return component === undefined
    ? kustomize(join(ROOT, 'deploy', 'overlays', overlay))
    : kustomizeWith(overlay, component);
}

/** `kind namespace/name` → the object with the tools' own additions set aside. */
function normalize(objects: K8sObject[]): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const original of objects) {
    const obj = structuredClone(original) as K8sObject & {
      data?: Record<string, unknown>;
      spec?: { template?: { spec?: { volumes?: Array<{ configMap?: { name: string } }> } } };
    };
    const labels = Object.fromEntries(
      Object.entries(obj.metadata.labels ?? {}).filter(([k]) => !HELM_LABELS.includes(k)),
    );
    if (Object.keys(labels).length > 0) obj.metadata.labels = labels;
    else delete obj.metadata.labels;
    obj.metadata.name = obj.metadata.name.replace(CONFIG_NAME, '$1');
    if (obj.kind === 'ConfigMap' && typeof obj.data?.['adapter.yaml'] === 'string')
      obj.data['adapter.yaml'] = parse(obj.data['adapter.yaml']);
    for (const volume of obj.spec?.template?.spec?.volumes ?? [])
      if (volume.configMap) volume.configMap.name = volume.configMap.name.replace(CONFIG_NAME, '$1');
    const key = `${obj.kind} ${obj.metadata.namespace ?? '-'}/${obj.metadata.name}`;
    assert.ok(!out.has(key), `${key} rendered twice`);
    out.set(key, collapseExpressions(obj));
  }
  return out;
}

/** CEL expressions (admission policies) with their whitespace runs collapsed to one space. */
function collapseExpressions(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(collapseExpressions);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [
      k,
      k === 'expression' && typeof v === 'string' ? v.replace(/\s+/g, ' ') : collapseExpressions(v),
    ]),
  );
}

/** Field paths where `a` (the chart's) and `b` (the overlay's) differ, with both values. */
function differences(a: unknown, b: unknown, path: string): string[] {
  if (isDeepStrictEqual(a, b)) return [];
  const bothObjects =
    typeof a === 'object' &&
    a !== null &&
    typeof b === 'object' &&
    b !== null &&
    Array.isArray(a) === Array.isArray(b);
  if (!bothObjects) return [`${path}: chart ${JSON.stringify(a)}, kustomize ${JSON.stringify(b)}`];
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  const at = (k: string) => (Array.isArray(a) ? `${path}[${k}]` : `${path}.${k}`);
  return [...keys].flatMap((k) =>
    differences((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], at(k)),
  );
}

describe('the chart renders what the Kustomize overlays render', () => {
  for (const c of CASES) {
    const name = c.component
      ? `deploy/overlays/${c.overlay} + components/${c.component}`
      : `deploy/overlays/${c.overlay}`;
    test(`${name} = helm template with ${JSON.stringify(c.values)}`, async () => {
      const [chart, overlay] = await Promise.all([
        helmTemplate({ ...OVERLAY_VALUES, ...c.values }),
        renderOverlay(c),
      ]);
      const fromChart = normalize(chart);
      const fromOverlay = normalize(overlay);
      assert.deepEqual(
        [...fromChart.keys()].sort(),
        [...fromOverlay.keys()].sort(),
        'the same objects (kind namespace/name)',
      );
      const diffs = [...fromChart].flatMap(([key, obj]) => differences(obj, fromOverlay.get(key), key));
      assert.deepEqual(diffs, [], `objects differ (${NAMESPACE}):\n${diffs.join('\n')}`);
    });
  }
});
