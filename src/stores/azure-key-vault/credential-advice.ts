/**
 * What a refusal by Microsoft Entra ID (the token endpoint) means for this store's setup, by its
 * AADSTS code (https://learn.microsoft.com/entra/identity-platform/reference-error-codes: every
 * error answer names its codes in `error_codes` and starts its description with `AADSTS<n>:`), and
 * what a TLS trust failure means: both are configuration, not passing trouble.
 */

/** The federation of the identity does not match the pod's token (issuer, subject or audience). */
const FEDERATION =
  "the managed identity exists, but none of its federated credentials matches the token of the pod's " +
  "service account: compare the issuer (the AKS cluster's OIDC issuer URL), the subject " +
  '(system:serviceaccount:NAMESPACE:SERVICE-ACCOUNT) and the audience (api://AzureADTokenExchange) ' +
  'with `az identity federated-credential list --identity-name IDENTITY --resource-group GROUP` ' +
  '(docs/azure-identity.md).';

const ADVICE: Readonly<Record<string, string>> = {
  '70021': FEDERATION,
  '700211': FEDERATION,
  '700212': FEDERATION,
  '700213': FEDERATION,
  '700016':
    'no application or managed identity with the client id AZURE_CLIENT_ID exists in the tenant ' +
    "AZURE_TENANT_ID: check the service account's annotation azure.workload.identity/client-id (the " +
    "identity's client id, not its object id) and the tenant (docs/azure-identity.md).",
  '90002':
    'the tenant AZURE_TENANT_ID does not exist: set the tenant id of the identity (docs/azure-identity.md).',
  '700024':
    'the federated token (AZURE_FEDERATED_TOKEN_FILE) is outside its valid time range: the projected ' +
    "token expired, or the node's clock is off.",
  '7000215':
    'the client secret (AZURE_CLIENT_SECRET) is wrong: use workload identity instead of a secret ' +
    '(docs/azure-identity.md).',
  '7000222':
    'the client secret (AZURE_CLIENT_SECRET) expired: use workload identity instead of a secret ' +
    '(docs/azure-identity.md).',
};

/** No AADSTS code: no credential was usable at all. */
const NO_CREDENTIAL =
  "On AKS enable workload identity for the pod's service account (docs/azure-identity.md); locally run `az login`.";

/** Every message of an `@azure/identity` error, its aggregated errors' included. */
function messagesOf(err: unknown): string[] {
  const e = err as { message?: unknown; errors?: unknown } | null;
  const own = typeof e?.message === 'string' ? [e.message] : [];
  const nested = Array.isArray(e?.errors) ? e.errors.flatMap(messagesOf) : [];
  return [...own, ...nested];
}

/** The first AADSTS code an identity error carries (`AADSTS700213`), or undefined. */
function aadstsCode(err: unknown): string | undefined {
  for (const message of messagesOf(err)) {
    const code = /\bAADSTS(\d{4,8})\b/.exec(message)?.[1];
    if (code !== undefined) return code;
  }
  return undefined;
}

/** What to say about a credential error: its AADSTS code with advice that matches it. */
export function credentialAdvice(err: unknown, name: string): string {
  const code = aadstsCode(err);
  if (code === undefined) return `no usable Azure credentials (${name}). ${NO_CREDENTIAL}`;
  const advice =
    ADVICE[code] ??
    `see https://login.microsoftonline.com/error?code=${code} for what it means for the identity's setup ` +
      `(docs/azure-identity.md).`;
  return `Microsoft Entra ID refused the credentials (AADSTS${code}): ${advice}`;
}

/** Node's codes for a server certificate its trusted CAs do not vouch for. */
const UNTRUSTED = [
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_GET_ISSUER_CERT',
];
const UNTRUSTED_TEXT = new RegExp(
  `\\b(${UNTRUSTED.join('|')})\\b|self[- ]signed certificate|unable to verify the first ` +
    `certificate|unable to get local issuer certificate`,
  'i',
);

/**
 * The TLS trust failure an error (or an aggregated credential error) carries, e.g.
 * `SELF_SIGNED_CERT_IN_CHAIN`; undefined for any other.
 */
export function untrustedCertificate(err: unknown): string | undefined {
  const e = err as { code?: unknown; cause?: unknown } | null;
  if (typeof e?.code === 'string' && UNTRUSTED.includes(e.code)) return e.code;
  const text = messagesOf(err).find((m) => UNTRUSTED_TEXT.test(m));
  if (text !== undefined) return UNTRUSTED_TEXT.exec(text)?.[0];
  return e?.cause === undefined || e.cause === err ? undefined : untrustedCertificate(e.cause);
}

/** The advice for an untrusted vault or token endpoint certificate. */
export const UNTRUSTED_ADVICE =
  'the server certificate is not signed by a CA this process trusts: set AZURE_KEY_VAULT_CA_FILE ' +
  '(adapter: store.settings.caFile) to the PEM file of the CA that issued it (trusted next to the ' +
  "public CAs, for the vault and the token endpoint), e.g. a TLS-inspecting proxy's CA; docs/azure-identity.md.";
