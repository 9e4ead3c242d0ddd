import { Command } from 'commander';
import { z } from 'zod';
import { retrySectionSchema } from '../config/sections.js';
import { kubernetesSectionSchema } from '../kube/config-section.js';
import { storeSectionSchema } from '../stores/config-section.js';
import { PullSecretError } from '../errors/index.js';
import { createLogger } from '../observability/logger.js';
import { assertClusterId } from '../pullsecret/identifiers.js';
import { DEFAULT_STORE_KIND } from '../stores/registry.js';
import { printOut, reportFailure } from './output.js';
import { factsTable, outputOption, render, type OutputFormat } from './output-format.js';
import { configuredStore, readConfigSections, type ScopeFlags } from './store-from-config.js';

interface RollbackOptions extends ScopeFlags {
  clusterId: string;
  config: string;
  toVersion?: string;
  secretName?: string;
  namespace?: string;
  output: OutputFormat;
}

/** The sections `rollback` reads from the adapter's config file; the others are ignored. */
const rollbackConfigSchema = z.object({
  store: storeSectionSchema.prefault({}),
  kubernetes: kubernetesSectionSchema.prefault({}),
  execution: z.object({ retry: retrySectionSchema.prefault({}) }).prefault({}),
});

/** `rollback --cluster-id ID [--to-version N] --config FILE`: an earlier version's content, current again. */
export function rollbackCommand(): Command {
  return new Command('rollback')
    .description(
      "Make an earlier version of a cluster's pull secret current again (as a new version) and update " +
        'the Kubernetes Secret.',
    )
    .requiredOption('--cluster-id <id>', 'the cluster')
    .requiredOption(
      '--config <file>',
      'the adapter config file (its store, kubernetes and execution.retry sections are used)',
    )
    .option(
      '--to-version <n>',
      'the version to restore (default: the previous one, the newest enabled version before the current)',
    )
    .option(
      '--project <id>',
      'the scope of a store with a one-setting scope (GCP: the project holding the secret)',
    )
    .option(
      '--scope <setting=value...>',
      'the scope settings of any scoped store (AWS: accountId=... region=...; Azure: vaultUrl=...)',
    )
    .option('--secret-name <name>', 'the cloud secret (default hyperfleet-{cluster-id}-pull-secret)')
    .option('--namespace <ns>', 'namespace of the Kubernetes Secret (default clusters-{cluster-id})')
    .addOption(outputOption('json'))
    .addHelpText(
      'after',
      [
        '',
        "Adds a new version holding the chosen version's content (history stays append-only), then writes the",
        "Kubernetes Secret when the config's kubernetes.target is api or manifests. Refused with VERSION_DESTROYED",
        'when that version was destroyed. A disabled version is enabled for the read and disabled again.',
        "The adapter's next reconcile of the cluster pushes the spec's pull secret again: fix the spec too.",
        'Prints the versions and outcomes (one JSON line unless -o says otherwise; never a credential).',
        'Exit codes: 0 done, 1 refused or a store/Kubernetes failure, 2 usage or configuration error.',
      ].join('\n'),
    )
    .action(async (options: RollbackOptions) => {
      process.exitCode = await runRollback(options);
    });
}

/** Version ids by store kind: GCP and the local store number them; AWS and Azure use opaque ids of a fixed form. */
const VERSION_FORMS: Readonly<Record<string, { pattern: RegExp; example: string }>> = {
  gcp: { pattern: /^[1-9][0-9]{0,14}$/, example: 'a positive integer such as 3' },
  local: { pattern: /^[1-9][0-9]{0,14}$/, example: 'a positive integer such as 3' },
  aws: { pattern: /^[A-Za-z0-9-]{32,64}$/, example: '32-64 letters, digits or "-"' },
  azure: { pattern: /^[0-9a-f]{32}$/, example: '32 hexadecimal digits' },
};

/**
 * `--to-version` checked against the store's version id form before anything is opened: a
 * malformed id is a usage error (exit 2), not a store failure. The value is never echoed.
 * @throws CONFIG_INVALID
 */
function assertVersionFlag(kind: string, version: string): void {
  const form = VERSION_FORMS[kind] ?? { pattern: /^[A-Za-z0-9-]{1,64}$/, example: 'a version id such as 3' };
  if (!form.pattern.test(version))
    throw new PullSecretError(
      'CONFIG_INVALID',
      `--to-version must be a ${kind} store version id: ${form.example}`,
    );
}

async function runRollback(options: RollbackOptions): Promise<number> {
  try {
    assertClusterId(options.clusterId);
    const {
      store: storeSection,
      kubernetes: k8s,
      execution,
    } = await readConfigSections(options.config, rollbackConfigSchema);
    if (options.toVersion !== undefined)
      assertVersionFlag(storeSection.type ?? DEFAULT_STORE_KIND, options.toVersion);
    const { open } = configuredStore(storeSection, options);
    // Loaded here, not at start-up: other commands must not pay for them.
    const { rollbackPullSecret } = await import('../retention/rollback.js');
    const { createKubernetesTarget } = await import('../kube/target-config.js');
    const log = createLogger({ level: 'warn' });
    const kubernetes =
      k8s.target === 'none'
        ? undefined
        : await createKubernetesTarget({
            target: k8s.target,
            manifestDir: k8s.manifestDir,
            kubeconfigPath: k8s.kubeconfig,
          });
    const store = await open();
    try {
      const result = await rollbackPullSecret(
        {
          clusterId: options.clusterId,
          secretName: options.secretName,
          namespace: options.namespace,
          toVersion: options.toVersion,
        },
        { store, kubernetes, retry: execution.retry, log },
      );
      const shown: Record<string, unknown> = {
        cluster_id: options.clusterId,
        secret_path: result.secretPath,
        from_version: result.fromVersion,
        restored_version: result.sourceVersion,
        version: result.push.version,
        outcome: result.push.outcome,
      };
      if (result.kubernetes !== undefined)
        shown.kubernetes = {
          namespace: result.kubernetes.namespace,
          name: result.kubernetes.name,
          outcome: result.kubernetes.outcome,
        };
      printOut(await render(options.output, shown, () => factsTable(shown), { oneLine: true }));
      return 0;
    } finally {
      await store.close();
    }
  } catch (err) {
    return reportFailure(err);
  }
}
