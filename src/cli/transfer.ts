import { Command } from 'commander';
import { z } from 'zod';
import { accountServiceSectionSchema } from '../config/account-service.js';
import { issueLines } from '../config/problems.js';
import { storeSectionSchema } from '../config/sections.js';
import { PullSecretError } from '../errors/index.js';
import { assertClusterId, defaultSecretId } from '../pullsecret/identifiers.js';
import { credentialStrings } from '../pullsecret/credentials.js';
import { redactor } from '../pullsecret/redact.js';
import { DEFAULT_STORE_KIND, storeConfigSchema, storeFactory } from '../stores/registry.js';
import { printOut, reportFailure } from './output.js';

export interface CheckOptions {
  clusterId: string;
  config: string;
  project?: string;
  scope?: string[];
  secretName?: string;
  retries: string;
}

/** The sections `transfer check` reads from the adapter's config file; the others are ignored. */
const transferConfigSchema = z.object({ accountService: accountServiceSectionSchema, store: storeSectionSchema.prefault({}) });

/** Decisions that need a human (exit 1); the others are a normal answer (exit 0). */
const PROBLEMS = new Set(['current-invalid', 'multiple', 'corrupted', 'unexpected', 'refused', 'unreachable']);

/** `transfer check --cluster-id ID --config FILE`: asks the account service about one cluster's transfer. */
export function transferCommand(): Command {
  const transfer = new Command('transfer')
    .description('Ownership transfers of clusters (docs/account-service.md).')
    // main.ts sets exit and output behaviour on top-level commands once built; sub-commands take them from here.
    .hook('preSubcommand', (self, sub) => {
      sub.copyInheritedSettings(self);
    });
  transfer.addCommand(
    new Command('check')
      .description("Check one cluster's accepted transfer now and print the decision; nothing is written.")
      .requiredOption('--cluster-id <id>', 'the cluster')
      .requiredOption('--config <file>', 'the adapter config file (its accountService and store sections are used)')
      .option('--project <id>', 'the scope of a store with a one-setting scope (GCP: the project holding the secret)')
      .option('--scope <setting=value...>', 'the scope settings of any scoped store (AWS: accountId=123456789012 region=us-east-1; Azure: vaultUrl=https://NAME.vault.azure.net)')
      .option('--secret-name <name>', 'the cloud secret (default hyperfleet-{cluster-id}-pull-secret)')
      .option('--retries <n>', 'retries of a 5xx answer with the backoff of accountService.transfer.interval (0-5)', '0')
      .addHelpText(
        'after',
        [
          '',
          "Reads the cluster's current pull secret from the store, asks the account service with the cluster's",
          'cloud.openshift.com token, merges an accepted transfer by the transfer rules and prints the decision as',
          'one JSON line (kind, reason, label, transfer id, registries replaced or added; never a credential).',
          'Exit codes: 0 decided (none, no-token, unchanged, update), 1 a problem to look at (current-invalid, multiple,',
          'corrupted, unexpected, refused, unreachable) or a store failure, 2 usage or configuration error.',
        ].join('\n'),
      )
      .action(async (options: CheckOptions) => {
        process.exitCode = await runCheck(options);
      }),
  );
  return transfer;
}

/**
 * The scope settings from `--scope key=value ...`, or `--project` for a store whose scope is one setting.
 * @throws CONFIG_INVALID for a malformed pair, a key that is not a scope setting, or a missing one.
 */
export function scopeOptions(kind: string, keys: readonly string[], noun: string, options: CheckOptions): Record<string, string> {
  const values: Record<string, string> = {};
  for (const pair of options.scope ?? []) {
    const at = pair.indexOf('=');
    const key = pair.slice(0, at);
    if (at < 1 || !keys.includes(key)) throw new PullSecretError('CONFIG_INVALID', `--scope takes ${keys.map((k) => `${k}=VALUE`).join(' ')} for the ${kind} store`);
    values[key] = pair.slice(at + 1);
  }
  if (options.project !== undefined) {
    if (keys.length !== 1) throw new PullSecretError('CONFIG_INVALID', `the ${kind} store's scope is ${keys.join(' and ')}: give them with --scope`);
    values[keys[0] as string] = options.project;
  }
  const missing = keys.filter((k) => values[k] === undefined);
  if (missing.length > 0) throw new PullSecretError('CONFIG_INVALID', `the ${kind} store needs its ${noun}: ${keys.length === 1 ? '--project or ' : ''}--scope ${missing.map((k) => `${k}=VALUE`).join(' ')}`);
  return values;
}

async function runCheck(options: CheckOptions): Promise<number> {
  try {
    assertClusterId(options.clusterId);
    const retries = Number(options.retries);
    if (!Number.isInteger(retries) || retries < 0 || retries > 5) throw new PullSecretError('CONFIG_INVALID', '--retries must be a whole number from 0 to 5');
    // The adapter config module (yaml, CEL, every section) is loaded here: the job must not pay for it.
    const { readYamlLayer } = await import('../config/adapter.js');
    const parsed = transferConfigSchema.safeParse(await readYamlLayer(options.config, 'the config file'));
    if (!parsed.success) throw new PullSecretError('CONFIG_INVALID', ['invalid configuration:', ...issueLines(parsed.error).map((p) => `  ${p}`)].join('\n'));
    const { accountService, store: storeSection } = parsed.data;
    // Loaded here, not at start-up: other commands must not pay for them.
    const { createAccountServiceClient } = await import('../account-service/client.js');
    const { checkTransfer, TRANSFER_REASONS } = await import('../account-service/transfer-check.js');
    const kind = storeSection.type ?? DEFAULT_STORE_KIND;
    const factory = storeFactory(kind);
    const scope = factory.scope;
    const scopeValues = scope === undefined ? {} : scopeOptions(kind, scope.settingKeys, scope.noun, options);
    const settings = storeConfigSchema(kind).safeParse({ ...storeSection.settings, ...scopeValues });
    if (!settings.success) throw new PullSecretError('CONFIG_INVALID', ['invalid store settings:', ...issueLines(settings.error).map((p) => `  store.settings.${p}`)].join('\n'));
    const store = await factory.create(settings.data);
    try {
      const secretId = options.secretName ?? defaultSecretId(options.clusterId);
      const current = await store.accessLatestEnabled(secretId);
      if (current === undefined) throw new PullSecretError('SECRET_NOT_FOUND', `the cluster's pull secret ${secretId} has no enabled version in the ${kind} store`);
      redactor.register(credentialStrings(current.data.toString('utf8')));
      const client = createAccountServiceClient(accountService);
      const decision = await checkTransfer(options.clusterId, current.data, {
        client,
        intervalMs: accountService.transfer.interval,
        retries,
        limits: { maxBytes: store.maxPayloadBytes, targetName: `${kind} store` },
      });
      const { reason, label } = TRANSFER_REASONS[decision.kind];
      const shown: Record<string, unknown> = { cluster_id: options.clusterId, kind: decision.kind, reason, label };
      if ('transferId' in decision) shown.transfer_id = decision.transferId;
      if ('transferIds' in decision) shown.transfer_ids = decision.transferIds;
      if (decision.kind === 'update') Object.assign(shown, { replaced: decision.replaced, added: decision.added });
      if ('message' in decision) shown.message = decision.message;
      printOut(JSON.stringify(shown));
      return PROBLEMS.has(decision.kind) ? 1 : 0;
    } finally {
      await store.close();
    }
  } catch (err) {
    return reportFailure(err);
  }
}
