import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RetryPolicy } from '../util/retry.js';
import type { PinStore } from './pin.js';
import { DEFAULT_PIN_NAMESPACE, filePinStore } from './pin-objects.js';

/** Where the Kubernetes Secret goes, as the adapter's, the Job's and the CLI's config say. */
interface PinPlace {
  target: 'api' | 'manifests' | 'none';
  manifestDir: string;
  kubeconfig?: string | undefined;
  /** Namespace of the pin ConfigMaps (the adapter's and the Jobs'); default `hyperfleet-system`. */
  namespace?: string | undefined;
  /** Watch the pin ConfigMaps and answer from memory (the adapter); the Job and the CLI read. */
  watch?: { retry: RetryPolicy; onError?: (fields: Record<string, unknown>) => void };
}

/**
 * The pin store that goes with the Kubernetes target (docs/retention.md, "Rollback and pin"): `api`
 * → ConfigMaps in the adapter's namespace; `manifests` → ConfigMap files in `{manifestDir}/.pins`;
 * `none` → undefined (a store-only setup has no place every process sees: a rollback there warns
 * that it is not pinned).
 */
export async function pinStoreFor(place: PinPlace): Promise<PinStore | undefined> {
  if (place.target === 'manifests') return filePinStore(join(place.manifestDir, '.pins'));
  if (place.target === 'none') return undefined;
  const { configMapPinStore } = await import('./pin-config-maps.js');
  return configMapPinStore({
    namespace: place.namespace ?? DEFAULT_PIN_NAMESPACE,
    kubeconfigPath: place.kubeconfig,
    watch: place.watch,
  });
}

/** Where a pod learns its namespace (the service account's projected files). */
const SERVICE_ACCOUNT_NAMESPACE_FILE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

/**
 * The Job's own namespace, where the adapter keeps the pins (the Job runs in `execution.job.namespace`):
 * `POD_NAMESPACE`, else the service account's namespace file, else `hyperfleet-system`.
 */
export function ownNamespace(
  env: NodeJS.ProcessEnv = process.env,
  file = SERVICE_ACCOUNT_NAMESPACE_FILE,
): string {
  if (env.POD_NAMESPACE !== undefined && env.POD_NAMESPACE !== '') return env.POD_NAMESPACE;
  try {
    const text = readFileSync(file, 'utf8').trim();
    if (text !== '') return text;
  } catch {
    // Not in a pod: the default.
  }
  return DEFAULT_PIN_NAMESPACE;
}
