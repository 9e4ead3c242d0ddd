import { decodeStrictBase64, isObject } from './validate.js';

const CREDENTIAL_FIELDS = ['auth', 'identitytoken', 'registrytoken', 'password'];

/**
 * Every credential string a pull secret document holds, found best-effort (never throws, also on
 * invalid input): the raw text, each base64 `auth`, its decoded `user:password` and password, and
 * tokens. Register the result with the redactor before anything else touches the document.
 */
export function credentialStrings(text: string): string[] {
  const found = [text, text.trim()];
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return found;
  }
  const auths = isObject(doc) ? doc.auths : undefined;
  if (!isObject(auths)) return found;
  for (const entry of Object.values(auths)) {
    if (!isObject(entry)) continue;
    for (const field of CREDENTIAL_FIELDS) {
      const value = entry[field];
      if (typeof value !== 'string') continue;
      found.push(value);
      const decoded = field === 'auth' ? decodeStrictBase64(value) : undefined;
      if (decoded !== undefined) {
        found.push(decoded);
        const colon = decoded.indexOf(':');
        if (colon >= 0) found.push(decoded.slice(colon + 1));
      }
    }
  }
  return found;
}
