import { describeError, PullSecretError } from '../errors/index.js';
import type { Logger } from '../observability/logger.js';
import { redactor } from '../pullsecret/redact.js';
import { digestsEqual, tokenDigest } from './token-compare.js';
import type { StoredTokens, TokenStorage } from './token-storage.js';
import { initialState, previousAccepted, rotatedState, rotationDue, type TokenSlot } from './token-state.js';

/** Default token lifetime: 24 h (rotation at 12 h, the previous token accepted 12 h more). */
const DEFAULT_TOKEN_LIFETIME_MS = 24 * 60 * 60 * 1000;

interface TokenManagerOptions {
  storage: TokenStorage;
  lifetimeMs?: number;
  /** How often the storage is re-read (other replicas' rotations); default 10 s. 0: only on `refresh`. */
  pollMs?: number;
  /** Whether this process creates and rotates tokens (default true); false only reads. */
  rotate?: boolean;
  /** Epoch ms; tests inject a clock instead of sleeping. */
  clock?: () => number;
  logger?: Logger;
}

/** The largest attempts of a create or rotation that keeps losing races before giving up until the next poll. */
const MAX_RACES = 5;

/**
 * Holds the admin tokens of this replica. `start` reads the storage (creating a first token when it
 * is empty); each poll re-reads it, so a rotation by another replica is seen without a restart, and
 * rotates once the current token is half its lifetime old. Rotations are compare-and-set: of
 * several replicas, one wins and the others re-read and take its token.
 *
 * Never logs, returns or throws token bytes: `check` answers with the slot only.
 */
export class TokenManager {
  private stored: StoredTokens | undefined;
  /** SHA-256 of the stored tokens, computed once per load: a check then hashes only the presented token. */
  private digests: { current: Buffer; previous?: Buffer } | undefined;
  /** Releases the redactor registration of the tokens held now. */
  private unregister: () => void = () => {};
  private timer: NodeJS.Timeout | undefined;
  private readonly lifetimeMs: number;
  private readonly clock: () => number;

  constructor(private readonly options: TokenManagerOptions) {
    this.lifetimeMs = options.lifetimeMs ?? DEFAULT_TOKEN_LIFETIME_MS;
    this.clock = options.clock ?? Date.now;
  }

  /** Where the tokens are kept (never the token). */
  get where(): string {
    return this.options.storage.where;
  }

  /** Generation time (epoch ms) of the current token, or undefined before the first read. */
  get currentGeneratedAt(): number | undefined {
    return this.stored?.state.current.generatedAt;
  }

  /**
   * Loads the tokens (creating them if allowed and absent) and starts polling.
   * @throws what the storage throws (CONFIG_INVALID, KUBE_*), or CONFIG_INVALID when there is no token
   * and this replica may not create one
   */
  async start(): Promise<void> {
    await this.refresh();
    if (this.stored === undefined) {
      throw new PullSecretError(
        'CONFIG_INVALID',
        `no admin token in ${this.where}, and this process does not create one`,
      );
    }
    const pollMs = this.options.pollMs ?? 10_000;
    if (pollMs > 0) {
      this.timer = setInterval(() => {
        this.refresh().catch((err: unknown) =>
          this.options.logger?.warn(
            { operation: 'admin-token-reload', where: this.where, ...describeError(err) },
            'Could not reload the admin tokens; keeping the last ones',
          ),
        );
      }, pollMs);
      this.timer.unref();
    }
  }

  /** Stops polling. */
  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.unregister();
  }

  /**
   * Re-reads the storage; creates the first token or rotates when due (and allowed), re-reading
   * after a lost race. @throws what the storage throws
   */
  async refresh(): Promise<void> {
    for (let race = 0; race < MAX_RACES; race++) {
      const stored = await this.options.storage.read();
      const now = this.clock();
      if (
        this.options.rotate === false ||
        (stored !== undefined && !rotationDue(stored.state, now, this.lifetimeMs))
      ) {
        this.adopt(stored);
        return;
      }
      const next = stored === undefined ? initialState(now) : rotatedState(stored.state, now);
      if (await this.options.storage.write(next, stored?.version)) {
        this.options.logger?.info(
          { operation: 'admin-token-rotate', where: this.where, first: stored === undefined },
          'Admin token rotated',
        );
        this.adopt(await this.options.storage.read());
        return;
      }
      // Another replica wrote first: take what it wrote (next round re-reads).
    }
    this.adopt(await this.options.storage.read());
  }

  /** Rotates now, whatever the token's age (`pull-secret token rotate`). @throws what the storage throws */
  async rotateNow(): Promise<void> {
    for (let race = 0; race < MAX_RACES; race++) {
      const stored = await this.options.storage.read();
      const now = this.clock();
      const next = stored === undefined ? initialState(now) : rotatedState(stored.state, now);
      if (await this.options.storage.write(next, stored?.version)) {
        this.adopt(await this.options.storage.read());
        return;
      }
    }
    throw new PullSecretError(
      'STORE_CONFLICT',
      `the admin token in ${this.where} kept changing while rotating; try again`,
    );
  }

  /**
   * Which slot `presented` matches: `current`, `previous` (only inside its grace), or undefined.
   * Both slots are always compared (fixed-length SHA-256 digests with `timingSafeEqual`, see
   * token-compare.ts), so the time taken tells neither a length nor which slot matched.
   */
  check(presented: string | undefined): TokenSlot | undefined {
    const state = this.stored?.state;
    const digests = this.digests;
    if (state === undefined || digests === undefined || presented === undefined || presented === '')
      return undefined;
    const digest = tokenDigest(presented);
    const current = digestsEqual(digest, digests.current);
    const previous = digestsEqual(digest, digests.previous ?? digests.current);
    if (current) return 'current';
    if (previous && state.previous !== undefined && previousAccepted(state, this.clock(), this.lifetimeMs))
      return 'previous';
    return undefined;
  }

  private adopt(stored: StoredTokens | undefined): void {
    if (stored !== undefined && stored.version !== this.stored?.version) {
      if (this.stored !== undefined)
        this.options.logger?.info(
          { operation: 'admin-token-reload', where: this.where },
          'Admin tokens reloaded',
        );
      this.stored = stored;
      this.digests = {
        current: tokenDigest(stored.state.current.token),
        ...(stored.state.previous ? { previous: tokenDigest(stored.state.previous.token) } : {}),
      };
      // The last line of defence masks them in any text this process writes (see redact.ts).
      const release = redactor.register([
        stored.state.current.token,
        ...(stored.state.previous ? [stored.state.previous.token] : []),
      ]);
      this.unregister();
      this.unregister = release;
    }
  }
}
