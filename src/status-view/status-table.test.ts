import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AdapterStatus, Cluster } from '../hyperfleet/types.js';
import { explainRow, toStatusRow } from './status-row.js';
import { formatStatusJson, formatStatusTable } from './status-table.js';

const ID = '019466a0-8f8e-7abc-9def-0123456789ab';
const T = '2026-01-01T10:00:00.000Z';

function cluster(name: string, generation = 1, extra: Partial<Cluster> = {}): Cluster {
  return {
    id: ID,
    kind: 'Cluster',
    name,
    generation,
    labels: {},
    spec: {},
    status: { conditions: [] },
    created_time: T,
    updated_time: T,
    ...extra,
  };
}

function status(
  generation: number,
  conditions: Array<[string, string, string, string?]>,
  data: Record<string, unknown> = {},
): AdapterStatus {
  return {
    adapter: 'pullsecret',
    observed_generation: generation,
    conditions: conditions.map(([type, s, reason, message]) => ({
      type,
      status: s as 'True',
      reason,
      ...(message === undefined ? {} : { message }),
      last_transition_time: T,
    })),
    data,
    created_time: T,
    last_report_time: T,
  };
}

const provisioned = status(
  2,
  [
    ['Applied', 'True', 'SecretUpdated'],
    ['Available', 'True', 'SecretAvailable'],
    ['Health', 'True', 'Healthy'],
  ],
  {
    secretName: `hyperfleet-${ID}-pull-secret`,
    secretVersion: '2',
    kubernetesSecret: { namespace: `clusters-${ID}`, name: `${ID}-pull-secret` },
  },
);
const invalid = status(
  1,
  [
    [
      'Applied',
      'False',
      'InvalidPullSecret',
      'invalid pull secret format: registry "quay.io": auth must decode to user:password',
    ],
    ['Available', 'False', 'SecretNotReady'],
    ['Health', 'True', 'Healthy'],
  ],
  {
    kubernetesSecret: { namespace: `clusters-${ID}`, name: `${ID}-pull-secret` },
    errorCode: 'PULL_SECRET_INVALID',
  },
);
const skipped = status(1, [
  [
    'Applied',
    'False',
    'PreconditionNotMet',
    'Skipped: the dns adapter has not succeeded yet (DnsSuccessful is not True)',
  ],
  ['Available', 'False', 'PreconditionNotMet'],
  ['Health', 'True', 'Healthy'],
]);

describe('status rows and table', () => {
  it('a provisioned cluster: conditions with reasons, version, abridged Kubernetes Secret; nothing to explain', () => {
    const row = toStatusRow(cluster('prod-1', 2), provisioned);
    assert.equal(row.report?.secretVersion, '2');
    assert.equal(explainRow(row), undefined);
    const table = formatStatusTable([row]);
    const [header, line] = table.split('\n');
    assert.match(header ?? '', /^CLUSTER +GEN +APPLIED +AVAILABLE +HEALTH +VERSION +KUBERNETES SECRET$/);
    assert.match(
      line ?? '',
      /^prod-1 +2 +True SecretUpdated +True SecretAvailable +True Healthy +2 +clusters-…456789ab\/…456789ab-pull-secret$/,
    );
    assert.ok(!table.includes('Why'));
  });

  it('wide output shows full ids', () => {
    const table = formatStatusTable([toStatusRow(cluster('prod-1', 2), provisioned)], { wide: true });
    assert.ok(table.startsWith('ID  '));
    assert.ok(table.includes(`clusters-${ID}/${ID}-pull-secret`));
  });

  it('wide output shows the previous version and the end of its grace, when retention reports them', () => {
    const retained = {
      ...provisioned,
      data: {
        ...provisioned.data,
        currentVersion: '3',
        previousVersion: '2',
        previousGraceEndsAt: '2026-01-02T10:00:00.000Z',
      },
    };
    const [header, line] = formatStatusTable([toStatusRow(cluster('prod-1', 2), retained)], {
      wide: true,
    }).split('\n');
    assert.match(header ?? '', / VERSION +PREVIOUS +GRACE ENDS +PIN +KUBERNETES SECRET$/);
    assert.match(line ?? '', / 3 +2 +2026-01-02T10:00:00\.000Z +- +clusters-/);
    assert.ok(!formatStatusTable([toStatusRow(cluster('prod-1', 2), retained)]).includes('PREVIOUS'));
  });

  it('wide output shows a rollback pin: the restored version and its expiry (status data.pin)', () => {
    const pinned = {
      ...provisioned,
      data: {
        ...provisioned.data,
        pin: {
          sourceVersion: '2',
          version: '4',
          by: 'cli (ops)',
          at: T,
          expiresAt: '2026-01-02T10:00:00.000Z',
        },
      },
    };
    const row = toStatusRow(cluster('prod-1', 2), pinned);
    assert.deepEqual(row.report?.pin, {
      sourceVersion: '2',
      by: 'cli (ops)',
      expiresAt: '2026-01-02T10:00:00.000Z',
    });
    const [header, line] = formatStatusTable([row], { wide: true }).split('\n');
    assert.match(header ?? '', / PIN +KUBERNETES SECRET$/);
    assert.match(line ?? '', / v2 until 2026-01-02T10:00:00\.000Z +clusters-/);
    const { pin: _pin, ...unpinned } = pinned.data;
    const plain = formatStatusTable([toStatusRow(cluster('prod-1', 2), { ...pinned, data: unpinned })], {
      wide: true,
    });
    assert.match(plain.split('\n')[1] ?? '', / - +clusters-/);
  });

  it("failed and skipped clusters show no version or Secret, and say why in the adapter's words", () => {
    const rows = [toStatusRow(cluster('bad-secret'), invalid), toStatusRow(cluster('waiting'), skipped)];
    assert.equal(rows[0]?.report?.kubernetesSecret, undefined);
    const table = formatStatusTable(rows);
    assert.match(table, /bad-secret +1 +False InvalidPullSecret +False SecretNotReady +True Healthy +- +-/);
    assert.match(
      table,
      /Why some clusters are not provisioned:\n {2}bad-secret {2}invalid pull secret format: registry "quay.io": auth must decode to user:password\n {2}waiting {5}Skipped: the dns adapter has not succeeded yet/,
    );
  });

  it('no status yet, an older generation, deletion', () => {
    assert.equal(explainRow(toStatusRow(cluster('new'), undefined)), 'no status from the adapter yet');
    const updating = toStatusRow(cluster('moving', 3), provisioned);
    assert.equal(explainRow(updating), 'being updated: the last status is for generation 2');
    assert.match(formatStatusTable([updating]), /moving +3 \(seen 2\)/);
    const deleting = toStatusRow(cluster('going', 2, { deleted_time: T }), undefined);
    assert.match(formatStatusTable([deleting]), /going +2 deleting/);
  });

  it('JSON keeps every field; an empty fleet says so', () => {
    const json = JSON.parse(formatStatusJson([toStatusRow(cluster('prod-1', 2), provisioned)])) as {
      clusters: Array<{ id: string; report: { kubernetesSecret: unknown } }>;
    };
    assert.equal(json.clusters[0]?.id, ID);
    assert.deepEqual(json.clusters[0]?.report.kubernetesSecret, {
      namespace: `clusters-${ID}`,
      name: `${ID}-pull-secret`,
    });
    assert.equal(formatStatusTable([]), 'No clusters.');
  });

  it('masks user:password@ in a stored message, e.g. from an older adapter that quoted a registry key', () => {
    const hostile = status(1, [
      [
        'Applied',
        'False',
        'InvalidPullSecret',
        'invalid pull secret format: registry key "pullbot:s3cr3t-canary-7Q2v@quay.io" and "https://u:hunter2@quay.io" are bad',
      ],
      ['Available', 'False', 'SecretNotReady'],
      ['Health', 'True', 'Healthy'],
    ]);
    const row = toStatusRow(cluster('leaky'), hostile);
    const out = `${formatStatusTable([row])}\n${formatStatusJson([row])}`;
    assert.ok(!out.includes('s3cr3t') && !out.includes('hunter2'), out);
    assert.match(out, /registry key "\[REDACTED\]@quay\.io" and "https:\/\/\[REDACTED\]@quay\.io"/);
  });
});
