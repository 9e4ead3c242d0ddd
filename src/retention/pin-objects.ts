import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { PullSecretError } from '../errors/index.js';
import { assertClusterId } from '../pullsecret/identifiers.js';
import { syncDirectory, writeFileAtomic } from '../util/atomic-file.js';
import { mkdir } from 'node:fs/promises';
import { pinFields, pinFromFields, type Pin, type PinStore } from './pin.js';

/** The label every pin object carries, for a label selector (`kubectl get cm -l ...`). */
export const PIN_LABEL = 'pullsecret.hyperfleet.io/pin';
/** Namespace of the pins when none is configured: the adapter's and the Jobs'. */
export const DEFAULT_PIN_NAMESPACE = 'hyperfleet-system';

/** The pin object's name for a cluster. */
export function pinObjectName(clusterId: string): string {
  return `pull-secret-pin-${clusterId}`;
}

/** The ConfigMap that holds a pin: the same object in the API and in a manifest directory. */
export function pinConfigMap(pin: Pin, namespace: string) {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: pinObjectName(pin.clusterId),
      namespace,
      labels: {
        'managed-by': 'hyperfleet',
        'app.kubernetes.io/managed-by': 'pull-secret',
        'app.kubernetes.io/component': 'rollback-pin',
        'cluster-id': pin.clusterId,
        [PIN_LABEL]: 'true',
      },
    },
    data: pinFields(pin),
  };
}

/**
 * Pins as ConfigMap files in `dir` (the embedded default: beside the manifests, `{manifestDir}/.pins`),
 * one `{cluster-id}.json` each, written atomically. Every process that shares the directory sees them.
 */
export function filePinStore(dir: string): PinStore {
  const pathOf = (clusterId: string) => {
    assertClusterId(clusterId);
    return join(dir, `${clusterId}.json`);
  };
  const failed = (err: unknown, verb: string, path: string) =>
    new PullSecretError('KUBE_FAILED', `cannot ${verb} the rollback pin ${path}: ${(err as Error).message}`, {
      cause: err,
    });
  return {
    where: `directory ${dir}`,
    async get(clusterId) {
      const path = pathOf(clusterId);
      let text: string;
      try {
        text = await readFile(path, 'utf8');
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw failed(err, 'read', path);
      }
      let object: { data?: Record<string, unknown> };
      try {
        object = JSON.parse(text) as { data?: Record<string, unknown> };
      } catch {
        object = {};
      }
      return pinFromFields(object.data ?? {}, path);
    },
    async put(pin) {
      const path = pathOf(pin.clusterId);
      try {
        await mkdir(dir, { recursive: true, mode: 0o700 });
        await writeFileAtomic(path, `${JSON.stringify(pinConfigMap(pin, DEFAULT_PIN_NAMESPACE), null, 2)}\n`);
      } catch (err) {
        throw failed(err, 'write', path);
      }
    },
    async delete(clusterId) {
      const path = pathOf(clusterId);
      const had = (await this.get(clusterId).catch(() => 'malformed')) !== undefined;
      try {
        await rm(path, { force: true });
        await syncDirectory(dir).catch(() => undefined);
      } catch (err) {
        throw failed(err, 'delete', path);
      }
      return had;
    },
  };
}
