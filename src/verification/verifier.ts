import { readFileSync } from 'node:fs';
import type { Dispatcher } from 'undici';
import { PullSecretError } from '../errors/index.js';
import { TokenBucket } from '../util/token-bucket.js';
import { VerdictCache } from './cache.js';
import { registryCredentials, registryHost, type RegistryCredential } from './credentials.js';
import { registryAgent } from './http.js';
import { checkLogin } from './login.js';
import type { VerificationOutcome } from '../pullsecret/verification-summary.js';

export { VERIFICATION_OUTCOMES, type VerificationOutcome } from '../pullsecret/verification-summary.js';

/** What the check of one `auths` entry found. */
export interface RegistryResult {
  /** The `auths` key. */
  registry: string;
  /** The host the check went to. */
  host: string;
  outcome: VerificationOutcome;
  /** Why, safe to log and report (never a credential). */
  detail: string;
  /** True when the verdict came from the cache (no registry call). */
  cached: boolean;
}

export interface VerificationReport {
  results: RegistryResult[];
  /** HTTP requests made for this report. */
  roundTrips: number;
}

/** The settings of a verifier (the adapter's `verification` section, or the CLI's options). */
export interface VerifierSettings {
  /** Registries to check (`auths` keys or hosts); `*` checks every one; others are skipped. */
  registries: readonly string[];
  /** PEM file of the CA that signs the registries' certificates (added to nothing: used alone). */
  caFile?: string;
  /** PEM text of that CA, instead of a file (a Job gets it in its environment); wins over `caFile`. */
  ca?: string;
  timeoutMs: number;
  /** Login checks per registry host and minute. */
  perRegistryPerMinute: number;
  /** How long a verdict is reused (0: never). */
  cacheSeconds: number;
}

interface VerifierHooks {
  /**
   * Each result, for `pullsecret_registry_verifications_total{registry,outcome}`: the host, or `other`
   * outside the allow-list.
   */
  onResult?: (host: string, outcome: VerificationOutcome) => void;
  /** Each HTTP request, with the host it went to. */
  onRequest?: (host: string) => void;
}

/**
 * Checks a pull secret's credentials against the registries it names (`checkLogin` for each entry
 * in the allow-list, in parallel), paced per registry host, with verdicts cached by a hash of host
 * and credential. Never throws for what a registry says; only for a signal that fires.
 */
export class RegistryVerifier {
  private readonly cache: VerdictCache;
  private readonly buckets = new Map<string, TokenBucket>();
  private readonly agent: Dispatcher;
  private readonly allowed: Set<string>;

  /** @throws CONFIG_INVALID when `caFile` cannot be read. */
  constructor(
    private readonly settings: VerifierSettings,
    private readonly hooks: VerifierHooks = {},
  ) {
    this.cache = new VerdictCache(settings.cacheSeconds * 1000);
    this.agent = registryAgent(
      settings.ca ?? (settings.caFile === undefined ? undefined : readCa(settings.caFile)),
    );
    this.allowed = new Set(settings.registries);
  }

  /** Checks every `auths` entry of `pullSecret` (a credential document: never logged). */
  async verify(pullSecret: string, signal?: AbortSignal): Promise<VerificationReport> {
    const credentials = registryCredentials(pullSecret);
    let roundTrips = 0;
    const results = await Promise.all(
      credentials.map(async (credential) => {
        const result = await this.check(credential, signal, () => (roundTrips += 1));
        // Hosts outside the allow-list come from customer input: one `other` label value for them all.
        this.hooks.onResult?.(this.allows(result.registry) ? result.host : 'other', result.outcome);
        return result;
      }),
    );
    return { results, roundTrips };
  }

  /** True when the allow-list names the entry (by key or by host) or holds `*`. */
  allows(registry: string): boolean {
    return this.allowed.has('*') || this.allowed.has(registry) || this.allowed.has(registryHost(registry));
  }

  /** Closes kept-alive connections. */
  close(): void {
    // Nothing is left to wait for: a check in flight fails as unreachable, as with a closed socket.
    this.agent.destroy().catch(() => undefined);
  }

  private async check(
    credential: RegistryCredential,
    signal: AbortSignal | undefined,
    counted: () => void,
  ): Promise<RegistryResult> {
    const { registry, host } = credential;
    const result = (outcome: VerificationOutcome, detail: string, cached = false): RegistryResult => ({
      registry,
      host,
      outcome,
      detail,
      cached,
    });
    if (!this.allows(registry)) return result('skipped', 'not in verification.registries');
    if (credential.kind === 'token')
      return result(
        'skipped',
        'identitytoken/registrytoken entries are not checked (OAuth refresh flow not supported)',
      );
    if (credential.kind === 'none') return result('skipped', 'no credentials in the entry');
    const key = VerdictCache.key(host, credential.username, credential.password);
    const hit = this.cache.get(key);
    if (hit !== undefined) return result(hit.outcome, hit.detail, true);
    await this.bucketOf(host).acquire(signal);
    const login = await checkLogin(host, credential.username, credential.password, {
      timeoutMs: this.settings.timeoutMs,
      agent: this.agent,
      signal,
      onRequest: (to) => {
        counted();
        this.hooks.onRequest?.(to);
      },
    });
    if (signal?.aborted === true) throw new PullSecretError('ABORTED', 'registry verification aborted');
    this.cache.set(key, login.outcome, login.detail);
    return result(login.outcome, login.detail);
  }

  private bucketOf(host: string): TokenBucket {
    let bucket = this.buckets.get(host);
    if (bucket === undefined) {
      const per = this.settings.perRegistryPerMinute;
      bucket = new TokenBucket(per, Math.max(1, Math.ceil(per / 6)));
      this.buckets.set(host, bucket);
    }
    return bucket;
  }
}

/** The text of the `verification.caFile` PEM file. @throws CONFIG_INVALID when it cannot be read. */
export function readCa(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new PullSecretError(
      'CONFIG_INVALID',
      `cannot read verification.caFile ${path}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`,
      { cause: err },
    );
  }
}
