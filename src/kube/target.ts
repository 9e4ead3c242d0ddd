import type { PushOutcome } from '../stores/store.js';
import type { PullSecretManifest } from './pull-secret-manifest.js';

/** Options every target call takes. */
export interface TargetCallOptions {
  signal?: AbortSignal;
}

/** Options of `remove`. */
export interface RemoveOptions extends TargetCallOptions {
  /** Deletes only a Secret whose labels pass (checked on the version read); any other is left alone, no error. */
  only?: (labels: Readonly<Record<string, string>>) => boolean;
}

/** What an apply did. `outcome` follows the secret stores' PushOutcome contract. */
export interface ApplyResult {
  outcome: PushOutcome;
  name: string;
  namespace: string;
  /** The Secret's resourceVersion after the call (API targets only). */
  resourceVersion?: string;
}

/** What is known about a Secret in the target. Never holds data values. */
export interface SecretDescription {
  name: string;
  namespace: string;
  /** Carries `managed-by=hyperfleet`. */
  managed: boolean;
  type?: string;
  resourceVersion?: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  dataKeys: string[];
  /** SHA-256 of the canonical form of the stored `.dockerconfigjson` (compare with the annotation). */
  contentSha256?: string;
}

/** The logger shape targets use (pino's `Logger` fits). Fields never carry Secret data. */
export interface TargetLogger {
  warn(fields: Record<string, unknown>, message: string): void;
  debug(fields: Record<string, unknown>, message: string): void;
}

/**
 * Where the cluster's pull secret Secret is written: a real API server (`secret-writer.ts`) or a
 * directory of manifests (`manifest-directory.ts`, the embedded default). Every method throws only
 * PullSecretError, never with Secret data in its message.
 */
export interface KubernetesSecretTarget {
  /** `kubernetes` or `manifest-directory`. */
  readonly kind: string;
  /** The API server URL or the directory, for logs and status. */
  readonly location: string;

  /**
   * Makes the Secret match `desired`: `created` when absent, `unchanged` (zero writes) when content
   * and our labels/annotations already match, else `updated` in place, keeping labels, annotations
   * and data keys others added.
   * @throws SECRET_UNMANAGED when an object exists without `managed-by=hyperfleet`.
   */
  apply(desired: PullSecretManifest, options?: TargetCallOptions): Promise<ApplyResult>;

  /**
   * Deletes the Secret if it is ours. Returns false when it did not exist, or `options.only` refused it.
   * @throws SECRET_UNMANAGED when it exists without `managed-by=hyperfleet` (and `only` let it pass).
   */
  remove(namespace: string, name: string, options?: RemoveOptions): Promise<boolean>;

  /** Metadata of the Secret, or undefined when absent. */
  describe(
    namespace: string,
    name: string,
    options?: TargetCallOptions,
  ): Promise<SecretDescription | undefined>;
}
