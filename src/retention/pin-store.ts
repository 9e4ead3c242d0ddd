import { join } from 'node:path';
import type { PinStore } from './pin.js';
import { DEFAULT_PIN_NAMESPACE, filePinStore } from './pin-objects.js';

/** Where the Kubernetes Secret goes, as the adapter's, the Job's and the CLI's config say. */
interface PinPlace {
  target: 'api' | 'manifests' | 'none';
  manifestDir: string;
  kubeconfig?: string | undefined;
  /** Namespace of the pin ConfigMaps (the adapter's and the Jobs'); default `hyperfleet-system`. */
  namespace?: string | undefined;
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
  });
}
