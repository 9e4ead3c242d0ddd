import { userInfo } from 'node:os';
import { Command } from 'commander';
import { z } from 'zod';
import { retrySectionSchema } from '../config/sections.js';
import { kubernetesSectionSchema } from '../kube/config-section.js';
import { storeSectionSchema } from '../stores/config-section.js';
import { PullSecretError } from '../errors/index.js';
import { createLogger } from '../observability/logger.js';
import { assertClusterId } from '../pullsecret/identifiers.js';
import { DEFAULT_STORE_KIND } from '../stores/registry.js';
import type { PinStore } from '../retention/pin.js';
import { CONFIG_DURATION, parseDuration } from '../util/duration.js';
import { printError, printOut, reportFailure } from './output.js';
import { factsTable, outputOption, render, type OutputFormat } from './output-format.js';
import { configuredStore, readConfigSections, type ScopeFlags } from './store-from-config.js';

interface RollbackOptions extends ScopeFlags {
  clusterId: string;
  config: string;
  toVersion?: string;
  secretName?: string;
  namespace?: string;
  output: OutputFormat;
  release?: boolean;
  reason?: string;
  expiresIn?: string;
}

/** The sections `rollback` reads from the adapter's config file; the others are ignored. */
const rollbackConfigSchema = z.object({
  store: storeSectionSchema.prefault({}),
  kubernetes: kubernetesSectionSchema.prefault({}),
  execution: z
    .object({
      retry: retrySectionSchema.prefault({}),
      // Where the adapter and its Jobs run: the pin ConfigMaps live there (kubernetes.target api).
      job: z.object({ namespace: z.string().min(1).default('hyperfleet-system') }).prefault({}),
    })
    .prefault({}),
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
    .option('--reason <text>', 'why (kept in the pin, shown in the status)')
    .option('--expires-in <duration>', 'the pin ends by itself after this long (30m, 4h, 2d)')
    .option('--release', "end the cluster's pin instead: the adapter's next reconcile serves the spec again")
    .addOption(outputOption('json'))
    .addHelpText(
      'after',
      [
        '',
        "Adds a new version holding the chosen version's content (history stays append-only), then writes the",
        "Kubernetes Secret when the config's kubernetes.target is api or manifests. Refused with VERSION_DESTROYED",
        'when that version was destroyed. A disabled version is enabled for the read and disabled again.',
        'The restored content is pinned (kubernetes.target api: a ConfigMap in execution.job.namespace; manifests:',
        "{manifestDir}/.pins): every reconcile serves it until the spec's pull secret changes, --release, or",
        '--expires-in passes. With kubernetes.target none there is no pin: the next reconcile serves the spec.',
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

/**
 * `--reason`, `--expires-in` and `--release` checked before anything is opened, with the pin's
 * `by` (the user running the command). @throws CONFIG_INVALID
 */
function checkPinFlags(options: RollbackOptions): { by: string; reason?: string; expiresAt?: string } {
  if (options.release === true && (options.toVersion ?? options.reason ?? options.expiresIn) !== undefined)
    throw new PullSecretError('CONFIG_INVALID', '--release takes no --to-version, --reason or --expires-in');
  if (options.reason !== undefined && !/^[^\p{Cc}]{1,200}$/u.test(options.reason))
    throw new PullSecretError('CONFIG_INVALID', '--reason must be 1-200 printable characters');
  const flags: { by: string; reason?: string; expiresAt?: string } = { by: `cli (${userInfo().username})` };
  if (options.reason !== undefined) flags.reason = options.reason;
  if (options.expiresIn !== undefined) {
    const ms = parseDuration(options.expiresIn, CONFIG_DURATION);
    if (ms === undefined || ms <= 0)
      throw new PullSecretError('CONFIG_INVALID', '--expires-in must be a duration such as 30m, 4h or 2d');
    flags.expiresAt = new Date(Date.now() + ms).toISOString();
  }
  return flags;
}

/** `rollback --release`: ends the pin (exit 0 also when there was none: nothing to do). */
async function runRelease(clusterId: string, pins: PinStore | undefined): Promise<number> {
  if (pins === undefined)
    throw new PullSecretError('CONFIG_INVALID', 'kubernetes.target is none: there is no pin to release');
  const { releasePin } = await import('../retention/rollback.js');
  const released = await releasePin(clusterId, {
    pins,
    log: createLogger({ level: 'warn' }),
    by: `cli (${userInfo().username})`,
  });
  printOut(JSON.stringify({ cluster_id: clusterId, released }));
  return 0;
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
    const pinFlags = checkPinFlags(options);
    const { pinStoreFor } = await import('../retention/pin-store.js');
    const pins = await pinStoreFor({ ...k8s, namespace: execution.job.namespace });
    if (options.release === true) return await runRelease(options.clusterId, pins);
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
          ...pinFlags,
        },
        { store, kubernetes, retry: execution.retry, log, pins },
      );
      const shown: Record<string, unknown> = {
        cluster_id: options.clusterId,
        secret_path: result.secretPath,
        from_version: result.fromVersion,
        restored_version: result.sourceVersion,
        version: result.push.version,
        outcome: result.push.outcome,
        pinned: result.pin !== undefined,
      };
      if (result.pin?.expiresAt !== undefined) shown.pin_expires_at = result.pin.expiresAt;
      if (result.pin === undefined)
        printError(
          'warning: kubernetes.target is none: no pin was recorded, the next reconcile serves the spec again',
        );
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
