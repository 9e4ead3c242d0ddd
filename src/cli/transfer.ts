import { Command } from 'commander';
import { z } from 'zod';
import { accountServiceSectionSchema } from '../config/account-service.js';
import { storeSectionSchema } from '../stores/config-section.js';
import { PullSecretError } from '../errors/index.js';
import { assertClusterId } from '../pullsecret/identifiers.js';
import { credentialStrings } from '../pullsecret/credentials.js';
import { redactor } from '../pullsecret/redact.js';
import { printOut, reportFailure } from './output.js';
import { factsTable, outputOption, render, type OutputFormat } from './output-format.js';
import {
  configuredStore,
  latestPullSecret,
  readConfigSections,
  type ScopeFlags,
} from './store-from-config.js';

interface CheckOptions extends ScopeFlags {
  clusterId: string;
  config: string;
  secretName?: string;
  retries: string;
  output: OutputFormat;
}

/** The sections `transfer check` reads from the adapter's config file; the others are ignored. */
const transferConfigSchema = z.object({
  accountService: accountServiceSectionSchema,
  store: storeSectionSchema.prefault({}),
});

/** Decisions that need a human (exit 1); the others are a normal answer (exit 0). */
const PROBLEMS = new Set([
  'current-invalid',
  'multiple',
  'corrupted',
  'unexpected',
  'refused',
  'unreachable',
]);

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
      .requiredOption(
        '--config <file>',
        'the adapter config file (its accountService and store sections are used)',
      )
      .option(
        '--project <id>',
        'the scope of a store with a one-setting scope (GCP: the project holding the secret)',
      )
      .option(
        '--scope <setting=value...>',
        'the scope settings of any scoped store (AWS: accountId=123456789012 region=us-east-1; Azure: ' +
          'vaultUrl=https://NAME.vault.azure.net)',
      )
      .option('--secret-name <name>', 'the cloud secret (default hyperfleet-{cluster-id}-pull-secret)')
      .addOption(outputOption('json'))
      .option(
        '--retries <n>',
        'retries of a 5xx answer with the backoff of accountService.transfer.interval (0-5)',
        '0',
      )
      .addHelpText(
        'after',
        [
          '',
          "Reads the cluster's current pull secret from the store, asks the account service with the cluster's",
          'cloud.openshift.com token, merges an accepted transfer by the transfer rules and prints the decision as',
          'one JSON line unless -o says otherwise (kind, reason, label, transfer id, registries replaced ' +
            'or added; never a credential).',
          'Exit codes: 0 decided (none, no-token, unchanged, update), 1 a problem to look at ' +
            '(current-invalid, multiple,',
          'corrupted, unexpected, refused, unreachable) or a store failure, 2 usage or configuration error.',
        ].join('\n'),
      )
      .action(async (options: CheckOptions) => {
        process.exitCode = await runCheck(options);
      }),
  );
  return transfer;
}

async function runCheck(options: CheckOptions): Promise<number> {
  try {
    assertClusterId(options.clusterId);
    const retries = Number(options.retries);
    if (!Number.isInteger(retries) || retries < 0 || retries > 5)
      throw new PullSecretError('CONFIG_INVALID', '--retries must be a whole number from 0 to 5');
    const { accountService, store: storeSection } = await readConfigSections(
      options.config,
      transferConfigSchema,
    );
    // Loaded here, not at start-up: other commands must not pay for them.
    const { createAccountServiceClient } = await import('../account-service/client.js');
    const { checkTransfer, TRANSFER_REASONS } = await import('../account-service/transfer-check.js');
    const { open } = configuredStore(storeSection, options);
    const store = await open();
    try {
      const current = await latestPullSecret(store, options.clusterId, options.secretName);
      redactor.register(credentialStrings(current.toString('utf8')));
      const client = createAccountServiceClient(accountService);
      const decision = await checkTransfer(options.clusterId, current, {
        client,
        intervalMs: accountService.transfer.interval,
        retries,
        limits: { maxBytes: store.maxPayloadBytes, targetName: `${store.kind} store` },
      });
      const { reason, label } = TRANSFER_REASONS[decision.kind];
      const shown: Record<string, unknown> = {
        cluster_id: options.clusterId,
        kind: decision.kind,
        reason,
        label,
      };
      if ('transferId' in decision) shown.transfer_id = decision.transferId;
      if ('transferIds' in decision) shown.transfer_ids = decision.transferIds;
      if (decision.kind === 'update')
        Object.assign(shown, { replaced: decision.replaced, added: decision.added });
      if ('message' in decision) shown.message = decision.message;
      printOut(await render(options.output, shown, () => factsTable(shown), { oneLine: true }));
      return PROBLEMS.has(decision.kind) ? 1 : 0;
    } finally {
      await store.close();
    }
  } catch (err) {
    return reportFailure(err);
  }
}
