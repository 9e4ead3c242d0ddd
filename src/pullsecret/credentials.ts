import { parseStrictJson } from './strict-json.js';
import { decodeStrictBase64 } from './validate.js';

const CREDENTIAL_FIELDS = ['auth', 'identitytoken', 'registrytoken', 'password'];

/**
 * Every credential string a pull secret document holds, found best-effort (never throws, also on
 * invalid input): the raw text, each base64 `auth`, its decoded `user:password` and password, and
 * tokens. Register the result with the redactor before anything else touches the document.
 */
export function credentialStrings(text: string): string[] {
  const found = [text, text.trim()];
  // Every member, overwritten duplicates included: validation refuses duplicates, but their values
  // must be masked in whatever is written before it does.
  parseStrictJson(text, {
    allowDuplicates: true,
    onMember: (path, value) => {
      if (path[0] !== 'auths') return;
      const [, key = '', field = ''] = path;
      // A registry key with userinfo (`user:pass@host`) carries a credential too.
      if (path.length === 2 && key.includes('@')) found.push(key, ...userinfoOf(key));
      if (path.length === 3 && typeof value === 'string' && CREDENTIAL_FIELDS.includes(field))
        found.push(value, ...decodedForms(field, value));
    },
  });
  return found;
}

function decodedForms(field: string, value: string): string[] {
  const decoded = field === 'auth' ? decodeStrictBase64(value) : undefined;
  if (decoded === undefined) return [];
  const colon = decoded.indexOf(':');
  return colon >= 0 ? [decoded, decoded.slice(colon + 1)] : [decoded];
}

/** `user:pass` and `pass` of `[scheme://]user:pass@host...`. */
function userinfoOf(key: string): string[] {
  const userinfo = key.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '').split('@')[0] ?? '';
  const colon = userinfo.indexOf(':');
  return colon >= 0 ? [userinfo, userinfo.slice(colon + 1)] : [userinfo];
}
