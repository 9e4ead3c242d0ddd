/**
 * The one place that makes text from a server or a library (API `Status` messages, gRPC details,
 * problem+json fields, an unclassified error's message) fit for an error message: control and
 * line-separator characters become spaces, runs of whitespace collapse, and the length is bounded
 * (with `…`), so such text can neither forge log lines nor flood them. It does not remove
 * credentials: callers pass the result through the redactor, or use it only for text that holds none.
 */
export function trimServerText(text: string, max = 200): string {
  let clean = '';
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0;
    const control = code < 0x20 || (code >= 0x7f && code <= 0x9f) || code === 0x2028 || code === 0x2029;
    clean += control ? ' ' : char;
  }
  clean = clean.replace(/\s+/g, ' ').trim();
  const chars = [...clean];
  return chars.length > max ? `${chars.slice(0, max).join('')}…` : clean;
}
