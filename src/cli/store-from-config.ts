import type { z } from 'zod';
import { issueLines } from '../config/problems.js';
import type { storeSectionSchema } from '../stores/config-section.js';
import { PullSecretError } from '../errors/index.js';
import { defaultSecretId } from '../pullsecret/identifiers.js';
import { DEFAULT_STORE_KIND, storeConfigSchema, storeFactory } from '../stores/registry.js';
import type { SecretStore } from '../stores/store.js';

/** The store scope options of a command that opens a cluster's store (`--project`, `--scope`). */
export interface ScopeFlags {
  project?: string;
  scope?: string[];
}

/** The store named by a config file's `store` section and the scope options, checked, not yet open. */
interface ConfiguredStore {
  /** Opens the store; the caller closes it. */
  open: () => Promise<SecretStore>;
}

/**
 * Reads the sections `schema` names from the adapter config file `path`; the others are ignored.
 * @throws CONFIG_INVALID (unreadable file, bad YAML, a section that does not parse, one line per problem).
 */
export async function readConfigSections<S extends z.ZodType>(path: string, schema: S): Promise<z.output<S>> {
  // Loaded here, not at start-up (yaml, CEL, every config section): the job must not pay for it.
  const { readYamlLayer } = await import('../adapter/config.js');
  const parsed = schema.safeParse(await readYamlLayer(path, 'the config file'));
  if (!parsed.success)
    throw new PullSecretError(
      'CONFIG_INVALID',
      ['invalid configuration:', ...issueLines(parsed.error).map((p) => `  ${p}`)].join('\n'),
    );
  return parsed.data;
}

/**
 * The scope settings from `--scope key=value ...`, or `--project` for a store whose scope is one setting.
 * @throws CONFIG_INVALID for a malformed pair, a key that is not a scope setting, or a missing one.
 */
function scopeOptions(
  kind: string,
  keys: readonly string[],
  noun: string,
  options: ScopeFlags,
): Record<string, string> {
  const values: Record<string, string> = {};
  for (const pair of options.scope ?? []) {
    const at = pair.indexOf('=');
    const key = pair.slice(0, at);
    if (at < 1 || !keys.includes(key))
      throw new PullSecretError(
        'CONFIG_INVALID',
        `--scope takes ${keys.map((k) => `${k}=VALUE`).join(' ')} for the ${kind} store`,
      );
    values[key] = pair.slice(at + 1);
  }
  if (options.project !== undefined) {
    if (keys.length !== 1)
      throw new PullSecretError(
        'CONFIG_INVALID',
        `the ${kind} store's scope is ${keys.join(' and ')}: give them with --scope`,
      );
    values[keys[0] as string] = options.project;
  }
  const missing = keys.filter((k) => values[k] === undefined);
  if (missing.length > 0)
    throw new PullSecretError(
      'CONFIG_INVALID',
      `the ${kind} store needs its ${noun}: ${keys.length === 1 ? '--project or ' : ''}--scope ` +
        `${missing.map((k) => `${k}=VALUE`).join(' ')}`,
    );
  return values;
}

/**
 * The store of a config's `store` section with the scope options merged into its settings.
 * @throws CONFIG_INVALID for bad scope options or store settings (before anything is opened).
 */
export function configuredStore(
  section: z.output<typeof storeSectionSchema>,
  options: ScopeFlags,
): ConfiguredStore {
  const kind = section.type ?? DEFAULT_STORE_KIND;
  const factory = storeFactory(kind);
  const scope = factory.scope;
  const scopeValues = scope === undefined ? {} : scopeOptions(kind, scope.settingKeys, scope.noun, options);
  const settings = storeConfigSchema(kind).safeParse({ ...section.settings, ...scopeValues });
  if (!settings.success)
    throw new PullSecretError(
      'CONFIG_INVALID',
      ['invalid store settings:', ...issueLines(settings.error).map((p) => `  store.settings.${p}`)].join(
        '\n',
      ),
    );
  return { open: () => factory.create(settings.data) };
}

/**
 * The newest enabled version of a cluster's stored pull secret (`secretName`, default
 * `hyperfleet-{cluster-id}-pull-secret`).
 * @throws SECRET_NOT_FOUND when it has none.
 */
export async function latestPullSecret(
  store: SecretStore,
  clusterId: string,
  secretName: string | undefined,
): Promise<Buffer> {
  const secretId = secretName ?? defaultSecretId(clusterId);
  const current = await store.accessLatestEnabled(secretId);
  if (current === undefined)
    throw new PullSecretError(
      'SECRET_NOT_FOUND',
      `the cluster's pull secret ${secretId} has no enabled version in the ${store.kind} store`,
    );
  return current.data;
}
