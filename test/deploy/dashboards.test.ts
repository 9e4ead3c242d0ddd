// The Grafana dashboard and the PrometheusRule may only reference what the service exports: every
// metric name parsed out of their PromQL must exist in `new Metrics().registry` (histogram series
// `_bucket/_sum/_count` included), with label names it has and label values it pre-creates. A metric
// declared (HELP/TYPE) with no samples yet, its label values known only when seen, matches on its
// declared label names.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { PrometheusRule as PrometheusRuleModel } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PrometheusRule';
import { AdapterMetrics as Metrics } from '../../src/adapter/metrics.js';

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

interface Selector {
  name: string;
  matchers: Array<{ label: string; op: string; value: string }>;
}

/** Series Prometheus itself writes for every target (`up`), and the target labels it attaches. */
const PROMETHEUS_SERIES = new Set(['up']);
const TARGET_LABELS = new Set(['namespace', 'pod', 'instance', 'job', 'service', 'container', 'endpoint']);
const KEYWORDS = new Set([
  'and',
  'or',
  'unless',
  'bool',
  'offset',
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'inf',
  'nan',
]);
const STRING = /"(?:[^"\\]|\\.)*"/g;
const MATCHER = /([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"/g;

/**
 * The series selectors of a PromQL expression: metric names with their label matchers. Function
 * names (followed by `(`), keywords, grouping label lists, ranges, numbers and strings are not
 * metric names. Grafana's `label_values(metric, label)` names a metric too.
 */
export function selectors(expr: string): Selector[] {
  const found: Selector[] = [];
  const labelValues = /label_values\(\s*([a-zA-Z_:][a-zA-Z0-9_:]*)\s*,\s*[a-zA-Z_]+\s*\)/g;
  for (const m of expr.matchAll(labelValues)) found.push({ name: m[1] as string, matchers: [] });
  const text = expr.replace(labelValues, ' ');
  const withMatchers = /([a-zA-Z_:][a-zA-Z0-9_:]*)\s*\{((?:[^}"]|"(?:[^"\\]|\\.)*")*)\}/g;
  for (const m of text.matchAll(withMatchers)) {
    const matchers = [...(m[2] as string).matchAll(MATCHER)].map((x) => ({
      label: x[1] as string,
      op: x[2] as string,
      value: x[3] as string,
    }));
    found.push({ name: m[1] as string, matchers });
  }
  const bare = text
    .replace(STRING, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/(?<![a-zA-Z0-9_:.])\d+(\.\d+)?(e[+-]?\d+)?/gi, ' ');
  for (const m of bare.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)(\s*\()?/g)) {
    const name = m[1] as string;
    if (m[2] !== undefined || KEYWORDS.has(name.toLowerCase()) || found.some((s) => s.name === name))
      continue;
    found.push({ name, matchers: [] });
  }
  return found;
}

interface Exported {
  type: string;
  labels: Map<string, Set<string>>;
  /** The declared label names of a metric with no samples yet (its values are not known). */
  declaredOnly?: Set<string>;
}

/** Every series the service exports: name → type and the label values it has (pre-created). */
async function exported(): Promise<Map<string, Exported>> {
  const out = new Map<string, Exported>();
  const registry = new Metrics().registry;
  for (const metric of await registry.getMetricsAsJSON()) {
    // prom-client types `type` as an enum; at run time it is the exposition name (`histogram`).
    const type = String(metric.type);
    const base: Exported = { type, labels: new Map() };
    const series =
      type === 'histogram' ? ['_bucket', '_sum', '_count'].map((s) => metric.name + s) : [metric.name];
    // prom-client keeps the declared label names on the metric object; its typings do not say so.
    const declared = registry.getSingleMetric(metric.name) as { labelNames?: readonly string[] } | undefined;
    const declaredOnly = metric.values.length === 0 ? new Set(declared?.labelNames ?? []) : undefined;
    for (const name of series) out.set(name, { type, labels: new Map(), declaredOnly });
    for (const value of metric.values as Array<{
      labels: Record<string, string | number>;
      metricName?: string;
    }>) {
      for (const [label, v] of Object.entries(value.labels)) {
        const target = out.get(value.metricName ?? metric.name) ?? base;
        if (!target.labels.has(label)) target.labels.set(label, new Set());
        target.labels.get(label)?.add(String(v));
      }
    }
  }
  return out;
}

/** Problems with one selector, as readable lines. */
function problems(selector: Selector, metrics: Map<string, Exported>, where: string): string[] {
  if (PROMETHEUS_SERIES.has(selector.name))
    return selector.matchers
      .filter((m) => !TARGET_LABELS.has(m.label))
      .map((m) => `${where}: up has no label ${m.label}`);
  const metric = metrics.get(selector.name);
  if (metric === undefined) return [`${where}: ${selector.name} is not exported by the service`];
  const out: string[] = [];
  for (const { label, op, value } of selector.matchers) {
    if (TARGET_LABELS.has(label)) continue;
    // A dashboard variable (`$store`) takes the values of the label it lists, whatever they are.
    const variable = /^\$\{?(\w+)\}?$/.exec(value)?.[1];
    if (variable !== undefined) {
      if (variableLabels().get(variable) !== label)
        out.push(`${where}: $${variable} does not list values of ${label}`);
      continue;
    }
    const values = metric.labels.get(label);
    if (values === undefined && metric.declaredOnly?.has(label)) continue;
    if (values === undefined) {
      out.push(`${where}: ${selector.name} has no label ${label}`);
      continue;
    }
    const matches =
      op === '=' || op === '!='
        ? values.has(value)
        : [...values].some((v) => new RegExp(`^(?:${value})$`).test(v));
    if (!matches)
      out.push(
        `${where}: ${selector.name}{${label}${op}"${value}"} matches no value it exports (${[...values].join(', ')})`,
      );
  }
  return out;
}

interface Rule {
  alert: string;
  expr: string;
  for: string;
  labels: { severity: string };
  annotations: Record<string, string>;
}

const dashboard = JSON.parse(read('dashboards/pull-secret-adapter.json')) as {
  uid: string;
  panels: Array<{
    id: number;
    type: string;
    title: string;
    datasource?: { uid: string };
    targets?: Array<{ expr: string; refId: string }>;
    gridPos: { x: number; w: number };
  }>;
  templating: { list: Array<{ name: string; query?: unknown }> };
};
/** Dashboard variable → the label whose values it lists (`label_values(metric, label)`). */
function variableLabels(): Map<string, string> {
  return new Map(
    dashboard.templating.list.flatMap((v) => {
      const label = /label_values\(\s*[\w:]+\s*,\s*(\w+)\s*\)/.exec(
        (v.query as { query?: string } | undefined)?.query ?? '',
      )?.[1];
      return label === undefined ? [] : [[v.name, label] as const];
    }),
  );
}
const ruleFile = parse(read('dashboards/prometheus-rule.yaml')) as {
  apiVersion: string;
  kind: string;
  metadata: { namespace: string };
  spec: { groups: Array<{ name: string; rules: Rule[] }> };
};
const rules = ruleFile.spec.groups.flatMap((g) => g.rules);
const dashboardExprs = [
  ...dashboard.panels.flatMap((p) =>
    (p.targets ?? []).map((t) => ({ where: `panel "${p.title}" ${t.refId}`, expr: t.expr })),
  ),
  ...dashboard.templating.list
    .filter((v) => typeof v.query === 'object')
    .map((v) => ({ where: `variable ${v.name}`, expr: (v.query as { query: string }).query })),
];

describe('PromQL parsing', () => {
  test('finds metric names, suffixes and matchers; skips functions, keywords, grouping labels, ranges and numbers', () => {
    const found = selectors(
      'histogram_quantile(0.95, sum by (le) (rate(a_seconds_bucket{ns=~"$x",le="300"}[$__rate_interval]))) / on (pod) group_left b_total > 1e-3 and absent(up{job="j"} == 1) or label_values(c_total, namespace)',
    );
    assert.deepEqual(
      found.map((s) => `${s.name}${s.matchers.map((m) => ` ${m.label}${m.op}${m.value}`).join('')}`).sort(),
      ['a_seconds_bucket ns=~$x le=300', 'b_total', 'c_total', 'up job=j'],
    );
  });
});

describe('dashboards and alerts reference only exported metrics', () => {
  test('every dashboard query', async () => {
    const metrics = await exported();
    const found = dashboardExprs.flatMap(({ where, expr }) =>
      selectors(expr).flatMap((s) => problems(s, metrics, where)),
    );
    assert.deepEqual(found, []);
    assert.ok(dashboardExprs.length >= 15);
  });

  test('every alert expression', async () => {
    const metrics = await exported();
    assert.deepEqual(
      rules.flatMap((r) => selectors(r.expr).flatMap((s) => problems(s, metrics, r.alert))),
      [],
    );
  });

  test('the dashboard shows every pullsecret_ metric the service exports (process metrics aside)', async () => {
    const shown = new Set(
      dashboardExprs.flatMap(({ expr }) =>
        selectors(expr).map((s) => s.name.replace(/_(bucket|sum|count)$/, '')),
      ),
    );
    const own = (await new Metrics({ defaultMetrics: false }).registry.getMetricsAsJSON()).map((m) => m.name);
    assert.deepEqual(
      own.filter((name) => !shown.has(name)),
      [],
    );
  });
});

describe('PrometheusRule', () => {
  test('is a PrometheusRule for hyperfleet-system with the documented alerts', () => {
    assert.equal(ruleFile.apiVersion, 'monitoring.coreos.com/v1');
    assert.equal(ruleFile.kind, 'PrometheusRule');
    assert.equal(ruleFile.metadata.namespace, 'hyperfleet-system');
    assert.doesNotThrow(
      () => new PrometheusRuleModel(ruleFile).validate(),
      'matches the Prometheus Operator CRD schema',
    );
    const names = rules.map((r) => r.alert);
    assert.equal(new Set(names).size, names.length, 'alert names are unique');
    // Job failure rate > 10 %, job duration > 5 min, API errors > 5 %, Workload Identity failures, quota errors.
    const seed: Array<[string, RegExp]> = [
      ['PullSecretJobFailureRateHigh', /result="failure".*> 0\.10/s],
      ['PullSecretJobDurationOver5m', /le="300"/],
      ['PullSecretGcpApiErrorRateHigh', /status_code=~"5\.\.".*> 0\.05/s],
      ['PullSecretGcpAuthenticationFailures', /status_code="401"/],
      ['PullSecretGcpQuotaExceeded', /status_code="429"/],
    ];
    for (const [alert, expr] of seed)
      assert.match(rules.find((r) => r.alert === alert)?.expr ?? '', expr, alert);
  });

  test("retention lag: each store's lag against the configured grace, at least 6 hours, for 30 minutes", () => {
    const lagging = rules.find((r) => r.alert === 'PullSecretRetentionLagging');
    assert.match(
      lagging?.expr ?? '',
      /^max by \(store\) \(pullsecret_retention_lag_seconds\)\s+> scalar\(clamp_min\(max\(pullsecret_retention_grace_seconds\), 21600\)\)\n$/,
    );
    assert.equal(lagging?.for, '30m');
  });

  test('every rule has a severity, a valid for, a summary, a description and its runbook section', () => {
    const runbook = read('docs/runbook.md');
    for (const rule of rules) {
      assert.match(rule.for, /^\d+[smh]$/, rule.alert);
      assert.ok(['critical', 'warning', 'info'].includes(rule.labels.severity), rule.alert);
      assert.ok(rule.annotations.summary && rule.annotations.description, rule.alert);
      assert.equal(rule.annotations.runbook_url, `docs/runbook.md#${rule.alert.toLowerCase()}`);
      assert.match(
        runbook,
        new RegExp(`^### ${rule.alert}$`, 'm'),
        `docs/runbook.md has a section for ${rule.alert}`,
      );
      assert.equal(
        (rule.expr.match(/\(/g) ?? []).length,
        (rule.expr.match(/\)/g) ?? []).length,
        `${rule.alert}: balanced parentheses`,
      );
    }
  });

  test('up{job=...} names the metrics Service the ServiceMonitor scrapes', () => {
    const service = parse(read('deploy/base/metrics-service.yaml')) as { metadata: { name: string } };
    const jobs = [...rules.map((r) => r.expr), ...dashboardExprs.map((e) => e.expr)].flatMap((e) =>
      [...e.matchAll(/up\{job="([^"]+)"/g)].map((m) => m[1]),
    );
    assert.ok(jobs.length > 0);
    for (const job of jobs) assert.equal(job, service.metadata.name);
  });
});

describe('Grafana dashboard', () => {
  test('a store selector: the store variable lists the store label, every store panel filters by it', async () => {
    const store = dashboard.templating.list.find((v) => v.name === 'store') as
      { includeAll?: boolean; multi?: boolean; allValue?: string } | undefined;
    assert.ok(
      store?.includeAll && store.multi && store.allValue === '.*',
      'all stores by default, several at once',
    );
    assert.equal(variableLabels().get('store'), 'store');
    const storeSeries = dashboardExprs
      .filter(({ where }) => where.startsWith('panel'))
      .flatMap(({ where, expr }) =>
        selectors(expr)
          .filter((s) => s.name.startsWith('pullsecret_store_'))
          .map((s) => ({ where, s })),
      );
    assert.ok(storeSeries.length >= 2);
    for (const { where, s } of storeSeries)
      assert.ok(
        s.matchers.some((m) => m.label === 'store' && m.op === '=~' && m.value === '$store'),
        where,
      );
    const labels = (await exported()).get('pullsecret_store_api_calls_total')?.labels.get('store');
    assert.ok(
      labels?.has('gcp') && labels.has('local'),
      'every store of the build is pre-created, so the selector lists it before its first call',
    );
    assert.deepEqual(
      problems(
        {
          name: 'pullsecret_store_api_calls_total',
          matchers: [{ label: 'method', op: '=~', value: '$store' }],
        },
        await exported(),
        'x',
      ),
      ['x: $store does not list values of method'],
    );
  });

  test('unique panel ids, a Prometheus data source variable, queries on every panel, within 24 columns', () => {
    assert.equal(dashboard.uid, 'pullsecret-adapter');
    const ids = dashboard.panels.map((p) => p.id);
    assert.equal(new Set(ids).size, ids.length);
    assert.ok(dashboard.templating.list.some((v) => v.name === 'datasource'));
    for (const panel of dashboard.panels.filter((p) => p.type !== 'row')) {
      assert.equal(panel.datasource?.uid, '${datasource}', panel.title);
      assert.ok((panel.targets ?? []).length > 0, panel.title);
      assert.ok(panel.gridPos.x + panel.gridPos.w <= 24, panel.title);
    }
  });
});
