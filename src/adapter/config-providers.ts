import { z } from 'zod';
import { preconditionSchema, type Precondition } from '../reconcile/preconditions.js';
import type { ProviderRoute } from '../reconcile/provider-routes.js';
import { isStoreKind, STORE_KINDS, storeFactory } from '../stores/registry.js';
import { wholeNumber } from '../config/sections.js';

/** Dotted paths in a cluster object, tried in order; the first one present wins. Empty: not read. */
const pathsSchema = z.array(z.string().min(1));

/** A provider key: the value of the cluster's provider field, or `*` for "any other provider". */
const PROVIDER_KEY = /^(\*|[a-z][a-z0-9-]{0,62})$/;
/** A store setting key, usable as `params.<key>` in CEL. */
const SETTING_KEY = /^[a-zA-Z][a-zA-Z0-9]{0,62}$/;

/** A record whose keys must match `key` (zod's own key error does not say the rule). */
function keyedRecord<T extends z.ZodType>(key: RegExp, rule: string, value: T) {
  return z.record(z.string(), value).check((ctx) => {
    for (const name of Object.keys(ctx.value))
      if (!key.test(name)) ctx.issues.push({ code: 'custom', message: rule, path: [name], input: name });
  });
}

/**
 * One entry of `providers`: the store that serves clusters of the provider, where each per-cluster
 * store setting is found in the cluster, the store's shared settings and rates, and the provider's
 * own preconditions.
 */
const providerSchema = z
  .object({
    /** Store kind; default the provider's default store (gcp, aws, azure serve themselves). */
    store: z.string().min(1).optional(),
    /** Settings shared by every cluster of the provider (endpoint, timeouts...), as `store.settings`. */
    settings: z.record(z.string(), z.unknown()).default({}),
    writesPerMinute: wholeNumber(1, 1_000_000).optional(),
    readsPerMinute: wholeNumber(1, 1_000_000).optional(),
    accessesPerMinute: wholeNumber(1, 10_000_000).optional(),
    /** Store setting key → cluster paths; merged over the provider's defaults. */
    fieldPaths: keyedRecord(
      SETTING_KEY,
      'must be a store setting key (letters and digits)',
      pathsSchema,
    ).default({}),
    /** CEL rules of this provider, evaluated before `preconditions.rules`; default one per scope setting. */
    rules: z.array(preconditionSchema).optional(),
  })
  .strict();

export const providersSchema = keyedRecord(
  PROVIDER_KEY,
  'must be a lowercase provider name (letters, digits, -) or *',
  providerSchema,
);

/** What the adapter knows about a provider without configuration: its store and where its settings sit. */
interface ProviderDefaults {
  readonly store: string;
  readonly fieldPaths: Readonly<Record<string, readonly string[]>>;
}

/**
 * The defaults of the three clouds, as data: validated only when a provider is configured, so a
 * build without one of these stores is not broken by its defaults. GCP's project paths are
 * `preconditions.fieldPaths.projectId` (the single-store setting), filled in by `resolveProviders`.
 */
export const PROVIDER_DEFAULTS: Readonly<Record<string, ProviderDefaults>> = {
  gcp: { store: 'gcp', fieldPaths: { projectId: [], kmsKeyName: ['spec.gcp.kmsKeyName'] } },
  aws: {
    store: 'aws',
    fieldPaths: {
      accountId: ['spec.aws.accountId', 'spec.platform.aws.accountID'],
      region: ['spec.aws.region', 'spec.platform.aws.region'],
      kmsKeyId: ['spec.aws.kmsKeyId'],
    },
  },
  azure: { store: 'azure', fieldPaths: { vaultUrl: ['spec.azure.keyVaultUrl'] } },
};

/** The parts of the parsed adapter config `resolveProviders` reads. */
interface ProviderInputs {
  providers?: z.output<typeof providersSchema>;
  /** The `store` section, its type resolved. */
  store: {
    type: string;
    settings: Record<string, unknown>;
    writesPerMinute?: number;
    readsPerMinute?: number;
    accessesPerMinute?: number;
  };
  projectIdPaths: readonly string[];
  /** Where the pull secret sits (`preconditions.fieldPaths.pullSecret`): no setting may read it. */
  pullSecretPaths: readonly string[];
}

/** True when one dotted path lies within the other (or they are the same). */
const overlaps = (a: string, b: string) => a === b || a.startsWith(`${b}.`) || b.startsWith(`${a}.`);

const kebab = (key: string) => key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

/** Default rules of a store: each scope setting present (GCP: the project; AWS: account and region). */
function scopeRules(kind: string): Precondition[] {
  const { scope, title } = storeFactory(kind);
  return (scope?.settingKeys ?? []).map((key) => ({
    name: kebab(key),
    expression: `params.${key} != ""`,
    message: `the cluster spec has no ${key} (the ${scope?.noun ?? ''} of the ${title} store)`,
  }));
}

/** The default field paths of `provider` when it is served by `kind`. */
function defaultPaths(
  provider: string,
  kind: string,
  projectIdPaths: readonly string[],
): Record<string, readonly string[]> {
  const defaults = Object.entries(PROVIDER_DEFAULTS).find(
    ([name, d]) => d.store === kind && (name === provider || provider === '*'),
  )?.[1];
  if (defaults === undefined) return {};
  return {
    ...defaults.fieldPaths,
    ...('projectId' in defaults.fieldPaths ? { projectId: projectIdPaths } : {}),
  };
}

/** Keys of a store's config a cluster may give: every plain (non-secret) setting it reads. */
function clusterSettingKeys(kind: string): Set<string> {
  return new Set(
    Object.values(storeFactory(kind).env)
      .filter((s) => s.secret !== true)
      .map((s) => s.key),
  );
}

function resolveOne(
  name: string,
  entry: z.output<typeof providerSchema>,
  inputs: ProviderInputs,
  problems: string[],
): ProviderRoute | undefined {
  const at = `providers.${name}`;
  const kind = entry.store ?? PROVIDER_DEFAULTS[name]?.store;
  if (kind === undefined) {
    problems.push(`${at}.store: required (there is no default store for provider ${name})`);
    return undefined;
  }
  if (!isStoreKind(kind)) {
    problems.push(`${at}.store: ${kind} is not a store this build knows (${STORE_KINDS.join(', ')})`);
    return undefined;
  }
  const factory = storeFactory(kind);
  // The `store` section (and its environment variables) still configures its store kind.
  const settings = { ...(inputs.store.type === kind ? inputs.store.settings : {}), ...entry.settings };
  problems.push(...factory.validate(settings).map((p) => `${at}.settings.${p}`));
  const merged = { ...defaultPaths(name, kind, inputs.projectIdPaths), ...entry.fieldPaths };
  const fieldPaths = Object.fromEntries(Object.entries(merged).filter(([, paths]) => paths.length > 0));
  const allowed = clusterSettingKeys(kind);
  for (const key of Object.keys(fieldPaths)) {
    if (!allowed.has(key))
      problems.push(
        `${at}.fieldPaths.${key}: not a setting of the ${kind} store (${[...allowed].join(', ')})`,
      );
    // Settings land in status data, logs and Job specs: a credential must never be read as one.
    if (fieldPaths[key]?.some((path) => inputs.pullSecretPaths.some((secret) => overlaps(path, secret)))) {
      problems.push(
        `${at}.fieldPaths.${key}: must not read the pull secret (${inputs.pullSecretPaths.join(', ')})`,
      );
    }
  }
  for (const key of factory.scope?.settingKeys ?? []) {
    if (fieldPaths[key] === undefined)
      problems.push(
        `${at}.fieldPaths.${key}: required: the ${factory.scope?.noun ?? kind} comes from each cluster`,
      );
  }
  // The `store` section's rate overrides apply to the provider entries of its kind, unless an entry sets its own.
  const shared: Partial<ProviderInputs['store']> = inputs.store.type === kind ? inputs.store : {};
  const rates = {
    writesPerMinute: entry.writesPerMinute ?? shared.writesPerMinute,
    readsPerMinute: entry.readsPerMinute ?? shared.readsPerMinute,
    accessesPerMinute: entry.accessesPerMinute ?? shared.accessesPerMinute,
  };
  return { store: kind, settings, ...rates, fieldPaths, rules: entry.rules ?? scopeRules(kind) };
}

/**
 * The providers the adapter serves. Without a `providers` section, the `store` section serves
 * every cluster (`*`: the one-provider case, as before; the default preconditions pick the clusters).
 * With one, each entry is filled from its provider's defaults and checked against the registry.
 * @returns the routes by provider key, and one line per problem (`providers.aws.store: ...`).
 */
export function resolveProviders(inputs: ProviderInputs): {
  routes: Record<string, ProviderRoute>;
  problems: string[];
} {
  const problems: string[] = [];
  const routes: Record<string, ProviderRoute> = {};
  if (inputs.providers === undefined) {
    const kind = inputs.store.type;
    const fieldPaths = Object.fromEntries(
      Object.entries(defaultPaths('*', kind, inputs.projectIdPaths)).filter(([, p]) => p.length > 0),
    );
    const { settings, writesPerMinute, readsPerMinute, accessesPerMinute } = inputs.store;
    routes['*'] = {
      store: kind,
      settings,
      writesPerMinute,
      readsPerMinute,
      accessesPerMinute,
      fieldPaths,
      rules: [],
    };
    return { routes, problems };
  }
  if (Object.keys(inputs.providers).length === 0)
    problems.push('providers: must map at least one provider to a store');
  for (const [name, entry] of Object.entries(inputs.providers)) {
    const route = resolveOne(name, entry, inputs, problems);
    if (route !== undefined) routes[name] = route;
  }
  return { routes, problems };
}
