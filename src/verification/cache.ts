import { createHash } from 'node:crypto';
import type { LoginOutcome } from './login.js';

/** A verdict kept for a while, so a burst of reconciles of the same credential asks the registry once. */
interface Entry {
  outcome: Extract<LoginOutcome, 'accepted' | 'rejected'>;
  detail: string;
  expiresAt: number;
}

/** Largest number of verdicts kept; the oldest go first. */
const MAX_ENTRIES = 10_000;

/**
 * Verdicts by SHA-256 of host and credential: the key holds no credential byte, and a changed
 * credential is a new key. Only `accepted` and `rejected` are kept; `unreachable` is asked again.
 */
export class VerdictCache {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** The key of one host and credential: a hex SHA-256, never the credential itself. */
  static key(host: string, username: string, password: string): string {
    return createHash('sha256')
      .update(host)
      .update('\0')
      .update(username)
      .update('\0')
      .update(password)
      .digest('hex');
  }

  get(key: string): Entry | undefined {
    if (this.ttlMs <= 0) return undefined;
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry;
  }

  set(key: string, outcome: LoginOutcome, detail: string): void {
    if (this.ttlMs <= 0 || outcome === 'unreachable') return;
    this.entries.delete(key);
    this.entries.set(key, { outcome, detail, expiresAt: this.now() + this.ttlMs });
    if (this.entries.size > MAX_ENTRIES) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
  }

  get size(): number {
    return this.entries.size;
  }
}
