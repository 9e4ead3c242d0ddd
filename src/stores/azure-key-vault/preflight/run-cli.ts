import { parseEnv, throwEnvProblems } from '../../../config/env.js';
import { PullSecretError } from '../../../errors/index.js';
import type { PreflightOutcome, PreflightRunner } from '../../factory.js';
import { azureStoreConfigSchema, azureStoreEnv } from '../config.js';
import { createAzureStore } from '../create-store.js';
import { AzureSecretStore } from '../azure-secret-store.js';
import { formatReport, runPreflight } from './run-preflight.js';

/** Secret name the reads are tried on; no cluster secret has it and preflight never writes it. */
const PROBE_SECRET_ID = 'hyperfleet-preflight-probe';
/** Preflight waits less than the job for an answer: an operator is watching. */
const PREFLIGHT_CALL_TIMEOUT_MS = '10000';
const OBJECT_ID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const RESOURCE_ID =
  /^\/subscriptions\/[0-9a-fA-F-]{36}\/resourceGroups\/[-\w.()]{1,90}\/providers\/Microsoft\.KeyVault\/vaults\/[a-zA-Z0-9-]{3,24}$/;

const text = (value: unknown): string | undefined =>
  typeof value === 'string' && value !== '' ? value : undefined;
const usage = (message: string) => new PullSecretError('CONFIG_INVALID', message);

/**
 * `pull-secret preflight --store azure`: checks the options, then credentials, the vault and the
 * identity's Key Vault rights (`runPreflight`).
 *
 * @throws PullSecretError CONFIG_INVALID for a bad option or store variable; ABORTED on abort.
 */
export const runAzurePreflight: PreflightRunner = async (
  options,
  { env, signal },
): Promise<PreflightOutcome> => {
  const assignee = text(options.assignee) ?? '<object-id>';
  if (assignee !== '<object-id>' && !OBJECT_ID.test(assignee))
    throw usage('invalid --assignee: must be the object (principal) id of the managed identity, a GUID');
  const resourceId = text(options.vaultResourceId);
  if (resourceId !== undefined && !RESOURCE_ID.test(resourceId)) {
    throw usage(
      'invalid --vault-resource-id: must be /subscriptions/SUB/resourceGroups/RG/providers/Microsoft.KeyVault/vaults/NAME',
    );
  }
  const parsed = parseEnv(azureStoreConfigSchema, azureStoreEnv, {
    ...env,
    AZURE_KEY_VAULT_URL: text(options.vaultUrl) ?? env.AZURE_KEY_VAULT_URL,
    AZURE_KEY_VAULT_CALL_TIMEOUT_MS: env.AZURE_KEY_VAULT_CALL_TIMEOUT_MS || PREFLIGHT_CALL_TIMEOUT_MS,
  });
  throwEnvProblems([parsed]);
  if (!parsed.ok) throw usage('invalid Azure store settings');
  const config = parsed.value;
  const vaultName = new URL(config.vaultUrl).hostname.split('.')[0] ?? '<vault-name>';
  const store = await createAzureStore(config);
  if (!(store instanceof AzureSecretStore))
    throw new PullSecretError('INTERNAL', 'the azure store factory did not return an Azure Key Vault store');
  try {
    const report = await runPreflight(
      {
        vaultUrl: config.vaultUrl,
        vaultName,
        assignee,
        vaultResourceId:
          resourceId ??
          `/subscriptions/<subscription-id>/resourceGroups/<resource-group>/providers/Microsoft.KeyVault/vaults/${vaultName}`,
        env,
        secretId: PROBE_SECRET_ID,
        signal,
      },
      store,
    );
    return {
      output: options.json === true ? JSON.stringify(report, null, 2) : formatReport(report),
      ok: report.ok,
      failedChecks: report.checks.filter((c) => c.status === 'fail').length,
    };
  } finally {
    await store.close();
  }
};
