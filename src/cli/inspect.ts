import { Command } from 'commander';
import { throwEnvProblems } from '../config/env.js';
import { PullSecretError } from '../errors/index.js';
import { assertClusterId, assertSecretId, defaultSecretId } from '../pullsecret/identifiers.js';
import { createStore, parseStoreEnv, selectStoreKind, storeFactory } from '../stores/registry.js';
import type { SecretDescription } from '../stores/store.js';
import { printOut, reportFailure } from './output.js';

/** The JSON `inspect` prints: metadata only, never a payload byte. */
export function inspectView(d: SecretDescription) {
  const latest = d.versions[0];
  const latestEnabled = d.versions.find((v) => v.state === 'ENABLED');
  return {
    name: d.name,
    path: d.path,
    labels: d.labels,
    created_time: d.createdTime,
    version_count: d.versions.length,
    latest_version: latest?.version ?? null,
    latest_enabled_version: latestEnabled?.version ?? null,
    versions: d.versions.map((v) => ({ version: v.version, state: v.state, created_time: v.createdTime })),
  };
}

/** `inspect`: prints a stored secret's metadata as JSON. */
export function inspectCommand(): Command {
  return new Command('inspect')
    .description("Print a stored pull secret's metadata as JSON (labels, versions); never the payload.")
    .requiredOption('--cluster-id <id>', 'cluster id')
    .option('--secret-name <name>', 'cloud secret id (default hyperfleet-{cluster-id}-pull-secret)')
    .addHelpText(
      'after',
      '\nThe store is chosen like for run-job: SECRET_STORE (or the store whose variables are set) and its settings\nfrom the environment, e.g. LOCAL_STORE_DIR. "not found" names the store and the directory or project searched.\nExit codes: 0 found, 1 not found or store failure, 2 usage or configuration error.',
    )
    .action(async (options: { clusterId: string; secretName?: string }) => {
      process.exitCode = await inspect(options.clusterId, options.secretName);
    });
}

async function inspect(clusterId: string, secretName: string | undefined): Promise<number> {
  try {
    assertClusterId(clusterId);
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
        throw new PullSecretError('SECRET_NOT_FOUND', `secret ${name} not found in the ${storeFactory(kind).title} at ${store.location}`);
      }
      printOut(JSON.stringify(inspectView(description), null, 2));
      return 0;
    } finally {
      await store.close();
    }
  } catch (err) {
    return reportFailure(err);
  }
}
