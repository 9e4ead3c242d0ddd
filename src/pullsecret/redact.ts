/**
 * Last line of defence against credential leaks: every text the service writes (log lines, stderr,
 * result files, status payloads) passes through `redact`, which replaces any registered credential
 * string. Code must still never put credentials in messages; this catches what a dependency might.
 */

/** Strings shorter than this are not registered: replacing them would mangle unrelated text. */
const MIN_LENGTH = 6;
const MASK = '[REDACTED]';

export class Redactor {
  /** Registered strings with how many registrations hold each. */
  private readonly secrets = new Map<string, number>();
  /**
   * Longest first, so a credential that contains another is masked whole; `undefined` when the set
   * changed since it was sorted. Sorted when `redact` needs it, not on every registration: an adapter
   * registers and releases each event's credentials (thousands in flight) but writes few lines.
   */
  private ordered: string[] | undefined = [];

  /**
   * Registers credential strings (and their JSON-escaped forms) to be masked until the returned
   * function is called. A long-running process releases them when the work is done, so neither the
   * set nor the cost of `redact` grows with every cluster it has seen; a one-shot job need not.
   */
  register(values: Iterable<string>): () => void {
    const added: string[] = [];
    for (const value of values) {
      if (value.length < MIN_LENGTH) continue;
      const escaped = JSON.stringify(value).slice(1, -1);
      added.push(...(escaped === value ? [value] : [value, escaped]));
    }
    for (const s of added) {
      const count = this.secrets.get(s) ?? 0;
      this.secrets.set(s, count + 1);
      if (count === 0) this.ordered = undefined;
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      for (const s of added) {
        const count = (this.secrets.get(s) ?? 1) - 1;
        if (count > 0) this.secrets.set(s, count);
        else if (this.secrets.delete(s)) this.ordered = undefined;
      }
    };
  }

  /** True when nothing is registered (then `redact` is the identity). */
  get empty(): boolean {
    return this.secrets.size === 0;
  }

  /** Returns `text` with every registered credential replaced by `[REDACTED]`. */
  redact(text: string): string {
    if (this.secrets.size === 0) return text;
    this.ordered ??= [...this.secrets.keys()].sort((a, b) => b.length - a.length);
    let out = text;
    for (const secret of this.ordered) {
      if (out.includes(secret)) out = out.split(secret).join(MASK);
    }
    return out;
  }
}

/** `user:password@` (optionally after `scheme://`) as found in registry keys and URLs. */
const USERINFO = /([A-Za-z][A-Za-z0-9+.-]*:\/\/)?[^\s"'`@/:]+:[^\s"'`@/]+@/g;

/**
 * Masks `user:password@` in text this process did not write and so could not register with a
 * redactor, such as a status message stored by an older adapter that quoted a registry key.
 */
export function maskUserinfo(text: string): string {
  return text.replace(USERINFO, (_match, scheme: string | undefined) => `${scheme ?? ''}${MASK}@`);
}

/** The process-wide redactor used by the logger and every CLI output path. */
export const redactor = new Redactor();
