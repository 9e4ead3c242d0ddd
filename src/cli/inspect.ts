import { Command } from 'commander';
import { throwEnvProblems } from '../config/env.js';
import { PullSecretError } from '../errors/index.js';
import { assertClusterId, assertSecretId, defaultSecretId } from '../pullsecret/identifiers.js';
import { createStore, parseStoreEnv, selectStoreKind, storeFactory } from '../stores/registry.js';
import type { SecretDescription } from '../stores/store.js';
import { DEFAULT_RETENTION_POLICY, summarizeVersions } from '../retention/plan.js';
import { printOut, reportFailure } from './output.js';
import { outputOption, render, type OutputFormat } from './output-format.js';
import { renderTable } from '../util/table.js';

/** The JSON `inspect` prints: metadata only, never a payload byte. */
function inspectView(d: SecretDescription, graceHours = DEFAULT_RETENTION_POLICY.graceHours) {
  const latest = d.versions[0];
  const latestEnabled = d.versions.find((v) => v.state === 'ENABLED');
  const summary = summarizeVersions(d.versions, graceHours);
  return {
    name: d.name,
    path: d.path,
    labels: d.labels,
    created_time: d.createdTime,
    version_count: d.versions.length,
    latest_version: latest?.version ?? null,
    latest_enabled_version: latestEnabled?.version ?? null,
    current_version: summary.currentVersion ?? null,
    previous_version: summary.previousVersion ?? null,
    previous_version_state: summary.previousState ?? null,
    previous_grace_ends_at: summary.previousGraceEndsAt ?? null,
    versions: d.versions.map((v) => ({ version: v.version, state: v.state, created_time: v.createdTime })),
  };
}

/** The table form of `inspectView`: one line per version (state, created), the secret's facts above. */
function inspectTable(view: ReturnType<typeof inspectView>, wide: boolean): string {
  const facts = [
    ['NAME', view.name],
    ['PATH', view.path],
    ['CURRENT', view.current_version ?? '-'],
    [
      'PREVIOUS',
      `${view.previous_version ?? '-'}${view.previous_version_state === null ? '' : ` (${view.previous_version_state})`}`,
    ],
    ...(wide
      ? [
          ['GRACE ENDS', view.previous_grace_ends_at ?? '-'],
          ['CREATED', view.created_time ?? '-'],
          [
            'LABELS',
            Object.entries(view.labels)
              .map(([k, v]) => `${k}=${v}`)
              .join(','),
          ],
        ]
      : []),
  ];
  const versions = renderTable(
    view.versions.map((v) => [v.version, v.state, v.created_time ?? '-']),
    { header: ['VERSION', 'STATE', 'CREATED'] },
  );
  // The facts column keeps the width of its longest possible name ('GRACE ENDS'), wide or not.
  return `${renderTable(facts, { minWidths: [10] })}\n\n${versions}`;
}

/** `inspect`: prints a stored secret's metadata (JSON unless `-o` says otherwise). */
export function inspectCommand(): Command {
  return new Command('inspect')
    .description(
      "Print a stored pull secret's metadata (labels, versions; JSON unless -o says otherwise); never the payload.",
    )
    .requiredOption('--cluster-id <id>', 'cluster id')
    .option('--secret-name <name>', 'cloud secret id (default hyperfleet-{cluster-id}-pull-secret)')
    .addOption(outputOption('json'))
    .option(
      '--grace-hours <n>',
      'retention.graceHours of the adapter, for previous_grace_ends_at',
      String(DEFAULT_RETENTION_POLICY.graceHours),
    )
    .addHelpText(
      'after',
      '\nThe store is chosen like for run-job: SECRET_STORE (or the store whose variables are set) and ' +
        'its settings\nfrom the environment, e.g. LOCAL_STORE_DIR. "not found" names the store and the ' +
        'directory or project searched.\nExit codes: 0 found, 1 not found or store failure, 2 usage or ' +
        'configuration error.',
    )
    .action(
      async (options: {
        clusterId: string;
        secretName?: string;
        graceHours: string;
        output: OutputFormat;
      }) => {
        process.exitCode = await inspect(
          options.clusterId,
          options.secretName,
          options.graceHours,
          options.output,
        );
      },
    );
}

async function inspect(
  clusterId: string,
  secretName: string | undefined,
  graceText: string,
  output: OutputFormat,
): Promise<number> {
  try {
    assertClusterId(clusterId);
    const graceHours = Number(graceText);
    if (!Number.isFinite(graceHours) || graceHours < 0 || graceHours > 8760)
      throw new PullSecretError('CONFIG_INVALID', '--grace-hours must be a number from 0 to 8760');
    const name = secretName ?? defaultSecretId(clusterId);
    assertSecretId(name);
    const kind = selectStoreKind(process.env);
    const parsed = parseStoreEnv(kind, process.env);
    throwEnvProblems([parsed]);
    const store = await createStore(kind, parsed.ok ? parsed.value : undefined);
    try {
      const description = await store.describe(name);
      if (description === undefined) {
        // Say where it looked: the store, and its directory or project (the usual cause is another store).
        throw new PullSecretError(
          'SECRET_NOT_FOUND',
          `secret ${name} not found in the ${storeFactory(kind).title} at ${store.location}`,
        );
      }
      const view = inspectView(description, graceHours);
      printOut(await render(output, view, (wide) => inspectTable(view, wide)));
      return 0;
    } finally {
      await store.close();
    }
  } catch (err) {
    return reportFailure(err);
  }
}
