/**
 * The one JSON parser for untrusted documents (pull secrets, CloudEvent bodies). Unlike `JSON.parse`
 * it refuses duplicate object keys (parsers disagree on which one wins, so a duplicate can make two
 * steps see two different credentials) and nesting deeper than a limit (so no later step, such as
 * sorting keys for the canonical form, can run out of stack and give another verdict). Its errors
 * name a byte offset and a rule, never the input: the input is a credential.
 */

/** Default nesting limit: a dockerconfigjson needs 3 levels; 64 leaves room for any extension. */
const MAX_JSON_DEPTH = 64;

/** Why a document was refused; `position` is a UTF-16 offset into the text. */
interface JsonProblem {
  kind: 'syntax' | 'depth' | 'duplicate';
  position: number;
  /** Keys from the root to the object holding the problem (only for `duplicate`). */
  path?: readonly string[];
}

type StrictJsonResult = { ok: true; value: unknown } | { ok: false; problem: JsonProblem };

interface StrictJsonOptions {
  maxDepth?: number;
  /**
   * Keep the last of duplicate keys instead of refusing them (what `JSON.parse` does). Only for
   * best-effort readers that must see every member, such as the redactor's credential finder.
   */
  allowDuplicates?: boolean;
  /** Called for every object member as it is parsed, overwritten duplicates included. */
  onMember?: (path: readonly string[], value: unknown) => void;
}

class Refused extends Error {
  constructor(readonly problem: JsonProblem) {
    super(problem.kind);
  }
}

// eslint-disable-next-line no-control-regex -- JSON forbids raw control characters in strings
const STRING = /"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/y;
// eslint-disable-next-line no-control-regex -- a backslash or a control character needs the full grammar
const PLAIN_UNSAFE = /[\\\u0000-\u001f]/;
const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;

class Parser {
  private pos = 0;
  private readonly path: string[] = [];

  constructor(
    private readonly text: string,
    private readonly options: StrictJsonOptions & { maxDepth: number },
  ) {}

  parseDocument(): unknown {
    const value = this.value(0);
    this.skip();
    if (this.pos !== this.text.length) this.fail('syntax');
    return value;
  }

  private fail(kind: JsonProblem['kind'], path?: readonly string[]): never {
    throw new Refused({ kind, position: this.pos, ...(path === undefined ? {} : { path }) });
  }

  private skip(): void {
    const text = this.text;
    let pos = this.pos;
    for (;;) {
      const c = text.charCodeAt(pos);
      if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
      pos++;
    }
    this.pos = pos;
  }

  private match(pattern: RegExp): string | undefined {
    pattern.lastIndex = this.pos;
    const m = pattern.exec(this.text);
    if (m === null) return undefined;
    this.pos = pattern.lastIndex;
    return m[0];
  }

  private literal(word: string, value: unknown): unknown {
    if (!this.text.startsWith(word, this.pos)) this.fail('syntax');
    this.pos += word.length;
    return value;
  }

  private value(depth: number): unknown {
    this.skip();
    const c = this.text[this.pos];
    if (c === '{' || c === '[') {
      if (depth >= this.options.maxDepth) this.fail('depth');
      return c === '{' ? this.object(depth + 1) : this.array(depth + 1);
    }
    if (c === '"') return this.string();
    if (c === 't') return this.literal('true', true);
    if (c === 'f') return this.literal('false', false);
    if (c === 'n') return this.literal('null', null);
    const number = this.match(NUMBER);
    if (number === undefined) this.fail('syntax');
    return Number(number);
  }

  private string(): string {
    const start = this.pos;
    // Fast path: most strings have no escapes, and end at the next quote.
    const end = this.text.indexOf('"', start + 1);
    if (end > 0) {
      const body = this.text.slice(start + 1, end);
      if (!PLAIN_UNSAFE.test(body)) {
        this.pos = end + 1;
        return body;
      }
    }
    const token = this.match(STRING);
    if (token === undefined) this.fail('syntax');
    // The token matched JSON's string grammar, so this cannot throw.
    return JSON.parse(token) as string;
  }

  private array(depth: number): unknown[] {
    this.pos++;
    const out: unknown[] = [];
    this.skip();
    if (this.text[this.pos] === ']') {
      this.pos++;
      return out;
    }
    for (;;) {
      out.push(this.value(depth));
      this.skip();
      const c = this.text[this.pos++];
      if (c === ']') return out;
      if (c !== ',') this.fail('syntax');
    }
  }

  private object(depth: number): Record<string, unknown> {
    this.pos++;
    const out: Record<string, unknown> = {};
    this.skip();
    if (this.text[this.pos] === '}') {
      this.pos++;
      return out;
    }
    for (;;) {
      this.skip();
      const keyAt = this.pos;
      if (this.text[this.pos] !== '"') this.fail('syntax');
      const key = this.string();
      if (this.options.allowDuplicates !== true && Object.prototype.hasOwnProperty.call(out, key)) {
        this.pos = keyAt;
        this.fail('duplicate', [...this.path]);
      }
      this.skip();
      if (this.text[this.pos++] !== ':') this.fail('syntax');
      this.path.push(key);
      const value = this.value(depth);
      this.options.onMember?.(this.path, value);
      this.path.pop();
      // defineProperty: a plain assignment of "__proto__" would replace the prototype, not add a key.
      if (key === '__proto__')
        Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
      else out[key] = value;
      this.skip();
      const c = this.text[this.pos++];
      if (c === '}') return out;
      if (c !== ',') this.fail('syntax');
    }
  }
}

/**
 * Parses `text` as one JSON value (RFC 8259 grammar, like `JSON.parse`), refusing duplicate keys
 * and nesting deeper than `maxDepth` (default 64). Never throws; recursion is bounded by the depth
 * limit, so a hostile document cannot exhaust the stack.
 */
export function parseStrictJson(text: string, options: StrictJsonOptions = {}): StrictJsonResult {
  try {
    return {
      ok: true,
      value: new Parser(text, { ...options, maxDepth: options.maxDepth ?? MAX_JSON_DEPTH }).parseDocument(),
    };
  } catch (err) {
    if (err instanceof Refused) return { ok: false, problem: err.problem };
    throw err;
  }
}

/** One line describing a problem for a message, with no input text in it. */
export function describeJsonProblem(problem: JsonProblem, maxDepth = MAX_JSON_DEPTH): string {
  const at = `at offset ${problem.position}`;
  if (problem.kind === 'depth') return `nested deeper than ${maxDepth} levels (${at})`;
  if (problem.kind === 'duplicate') {
    const where =
      problem.path === undefined || problem.path.length === 0
        ? 'the top-level object'
        : problem.path.length === 1
          ? `"${safeKey(problem.path[0] ?? '')}"`
          : 'an object';
    return `duplicate key in ${where} (${at}); parsers disagree on which value wins`;
  }
  return `not valid JSON (${at})`;
}

/** Keys of our own format (`auths`, `data`, ...) are named; anything else could be hostile. */
function safeKey(key: string): string {
  return /^[a-z][a-zA-Z]{0,30}$/.test(key) ? key : '…';
}
