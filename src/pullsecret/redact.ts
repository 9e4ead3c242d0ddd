/**
 * Last line of defence against credential leaks: every text the service writes (log lines, stderr,
 * result files, status payloads) passes through `redact`, which replaces any registered credential
 * string. Code must still never put credentials in messages; this catches what a dependency might.
 */

/** Strings shorter than this are not registered: replacing them would mangle unrelated text. */
const MIN_LENGTH = 6;
const MASK = '[REDACTED]';

export class Redactor {
  private readonly secrets = new Set<string>();
  /** Longest first, so a credential that contains another is masked whole. */
  private ordered: string[] = [];

  /** Registers credential strings (and their JSON-escaped forms) to be masked from now on. */
  register(values: Iterable<string>): void {
    for (const value of values) {
      if (value.length < MIN_LENGTH) continue;
      this.secrets.add(value);
      const escaped = JSON.stringify(value).slice(1, -1);
      if (escaped !== value) this.secrets.add(escaped);
    }
    this.ordered = [...this.secrets].sort((a, b) => b.length - a.length);
  }

  /** True when nothing is registered (then `redact` is the identity). */
  get empty(): boolean {
    return this.secrets.size === 0;
  }

  /** Returns `text` with every registered credential replaced by `[REDACTED]`. */
  redact(text: string): string {
    let out = text;
    for (const secret of this.ordered) {
      if (out.includes(secret)) out = out.split(secret).join(MASK);
    }
    return out;
  }
}

/** The process-wide redactor used by the logger and every CLI output path. */
export const redactor = new Redactor();
