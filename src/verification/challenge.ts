/**
 * `WWW-Authenticate` challenges of the Docker Registry HTTP API v2 (RFC 7235 syntax): the scheme
 * (`Basic` or `Bearer`) and its parameters (`realm`, `service`, `scope`).
 */
export interface Challenge {
  /** Lower-case scheme: `basic`, `bearer`, or another the registry named. */
  scheme: string;
  params: Record<string, string>;
}

const PARAM = /\s*([A-Za-z0-9_.-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]*))\s*,?/y;

/**
 * Parses the challenges of one header value, best first as the registry listed them. Unparsable
 * text ends the parse; what was read before it is kept. Never throws.
 */
export function parseChallenges(header: string | undefined): Challenge[] {
  const found: Challenge[] = [];
  if (header === undefined) return found;
  let rest = header.trim();
  while (rest.length > 0) {
    const scheme = /^([A-Za-z][A-Za-z0-9_.-]*)\s*/.exec(rest);
    if (scheme === null) break;
    rest = rest.slice(scheme[0].length);
    const params: Record<string, string> = {};
    PARAM.lastIndex = 0;
    let at = 0;
    for (;;) {
      PARAM.lastIndex = at;
      const m = PARAM.exec(rest);
      // A name followed by something other than `=` starts the next challenge.
      if (m === null || m[0].length === 0) break;
      params[(m[1] as string).toLowerCase()] =
        m[2] !== undefined ? m[2].replace(/\\(.)/g, '$1') : (m[3] ?? '');
      at = PARAM.lastIndex;
    }
    rest = rest.slice(at).replace(/^[\s,]+/, '');
    found.push({ scheme: (scheme[1] as string).toLowerCase(), params });
  }
  return found;
}
