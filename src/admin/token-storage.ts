import type { TokenState } from './token-state.js';

/** A stored token state and the version it was read at (for a compare-and-set write). */
export interface StoredTokens {
  readonly state: TokenState;
  /** Opaque: a Secret's resourceVersion, a file's content digest. */
  readonly version: string;
}

/**
 * Where the admin tokens live (a Kubernetes Secret, or a file for the dev stack and tests). Writes
 * are compare-and-set, so of several replicas rotating at once exactly one wins and the others
 * re-read. Errors never quote token bytes.
 */
export interface TokenStorage {
  /** Where the tokens are, for messages and `token show` (never the token). */
  readonly where: string;
  /**
   * The stored state, or `undefined` when nothing is stored yet. @throws CONFIG_INVALID for malformed
   * content; KUBE_* for the Secret
   */
  read(): Promise<StoredTokens | undefined>;
  /**
   * Writes `state` if the stored version is still `expected` (`undefined`: nothing stored yet).
   * @returns false when another writer changed it first (the caller re-reads)
   */
  write(state: TokenState, expected: string | undefined): Promise<boolean>;
}
