import { toPullSecretError } from '../errors/index.js';
import { isStoreKind, selectStoreKind, storeFactory } from '../stores/registry.js';
import { envFor } from '../stores/config-env.js';
import {
  HYPERFLEET_BROKER_ENV,
  hyperfleetBrokerDocument,
  translateHyperfleetBroker,
} from '../config/hyperfleet-broker.js';
import { HYPERFLEET_ENV } from '../config/hyperfleet-env.js';
import { brokerKind, layerAt, mergeLayers, valueAt, type Layer } from './config-layers.js';

/** The HyperFleet API versions our client speaks (`HYPERFLEET_API_VERSION`). */
const API_VERSIONS = ['v1'];

const given = (env: NodeJS.ProcessEnv, name: string): string | undefined => {
  const value = env[name];
  return value === undefined || value === '' ? undefined : value;
};

function envLayer(env: NodeJS.ProcessEnv, table: Readonly<Record<string, string>>): Layer {
  let layer: Layer = {};
  for (const [name, path] of Object.entries(table)) {
    const value = given(env, name);
    if (value !== undefined)
      layer = mergeLayers(layer, layerAt(path, path === 'broker.type' ? brokerKind(value) : value));
  }
  return layer;
}

/**
 * Merges the adapter's configuration layers, lowest first: the config file, the hyperfleet-broker
 * file (`BROKER_CONFIG_FILE`) with the library's own `BROKER_*` / `SUBSCRIBER_*` overrides,
 * HyperFleet's `HYPERFLEET_*` variables, then ours. The store kind is resolved here (an explicit
 * `store.type`, else the store whose variables are set, else the default), and only that store's
 * variables are applied, so the image's `LOCAL_STORE_DIR` never lands in GCP settings.
 *
 * @returns the merged raw config and the problems found on the way (validated by the caller).
 */
export function adapterEnvLayers(
  file: Layer,
  brokerFile: Layer | undefined,
  env: NodeJS.ProcessEnv,
): { raw: Layer; problems: string[] } {
  const problems: string[] = [];
  let raw = file;
  if (
    brokerFile !== undefined ||
    Object.keys(HYPERFLEET_BROKER_ENV).some((name) => given(env, name) !== undefined)
  ) {
    const doc = hyperfleetBrokerDocument(brokerFile, env);
    if (doc.ok) {
      const translated = translateHyperfleetBroker(doc.value);
      problems.push(...translated.problems);
      raw = mergeLayers(raw, { broker: translated.broker });
    } else {
      problems.push(...doc.problems);
    }
  }
  raw = mergeLayers(raw, envLayer(env, HYPERFLEET_ENV));
  const version = given(env, 'HYPERFLEET_API_VERSION');
  if (version !== undefined && !API_VERSIONS.includes(version))
    problems.push(
      `HYPERFLEET_API_VERSION: must be one of ${API_VERSIONS.join(', ')} (the API versions this adapter speaks)`,
    );

  const own = Object.entries(envFor('adapter'));
  raw = mergeLayers(
    raw,
    envLayer(
      env,
      Object.fromEntries(own.filter(([, v]) => v.store === undefined).map(([name, v]) => [name, v.path])),
    ),
  );
  const chosen = valueAt(raw, 'store.type');
  // An unknown store.type is left to the schema, which names the allowed ones.
  if (chosen !== undefined && (typeof chosen !== 'string' || !isStoreKind(chosen))) return { raw, problems };
  let kind: string;
  try {
    kind = selectStoreKind(env, chosen);
  } catch (err) {
    problems.push(`store.type: ${toPullSecretError(err).message}`);
    return { raw, problems };
  }
  const store = storeFactory(kind);
  const settings = own.filter(([name, v]) => v.store === store.kind && name in store.env);
  raw = mergeLayers(
    raw,
    mergeLayers(
      layerAt('store.type', kind),
      envLayer(env, Object.fromEntries(settings.map(([name, v]) => [name, v.path]))),
    ),
  );
  return { raw, problems };
}
