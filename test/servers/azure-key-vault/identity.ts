import { randomBytes } from 'node:crypto';

/**
 * The loopback Microsoft Entra ID stand-in that `@azure/identity` (MSAL) is pointed at through
 * AZURE_AUTHORITY_HOST: the tenant's OpenID configuration and the v2.0 token endpoint, granting
 * the client-credentials flow with a federated client assertion (AKS workload identity) to one
 * client id and one assertion, for one audience. Tokens are opaque and remembered with their audience.
 */

/** The resource Key Vault names in its challenge and expects as the token's audience. */
export const KEY_VAULT_RESOURCE = 'https://vault.azure.net';

export interface IdentityOptions {
  tenantId: string;
  clientId: string;
  /** The federated token the workload presents (the projected service account token). */
  assertion: string;
  /** Lifetime of issued tokens, in seconds. */
  tokenLifetimeSeconds?: number;
}

export interface TokenAnswer {
  status: number;
  body: Record<string, unknown>;
}

export class IdentityStandIn {
  /** Issued access tokens → audience. */
  private readonly tokens = new Map<string, string>();
  tokenRequests = 0;

  constructor(private readonly options: IdentityOptions) {}

  get tenantId(): string {
    return this.options.tenantId;
  }

  /** `GET /{tenant}/v2.0/.well-known/openid-configuration`. */
  openIdConfiguration(base: string): Record<string, unknown> {
    const tenant = `${base}/${this.options.tenantId}`;
    return {
      issuer: `${tenant}/v2.0`,
      authorization_endpoint: `${tenant}/oauth2/v2.0/authorize`,
      token_endpoint: `${tenant}/oauth2/v2.0/token`,
      end_session_endpoint: `${tenant}/oauth2/v2.0/logout`,
      jwks_uri: `${tenant}/discovery/v2.0/keys`,
      response_types_supported: ['code', 'id_token', 'code id_token', 'id_token token'],
      subject_types_supported: ['pairwise'],
      id_token_signing_alg_values_supported: ['RS256'],
      scopes_supported: ['openid', 'profile', 'email', 'offline_access'],
      tenant_region_scope: 'EU',
    };
  }

  /**
   * `POST /{tenant}/oauth2/v2.0/token` with a form body: the client-credentials grant with a client assertion.
   * A refusal is 400 with `error`, an `error_description` starting `AADSTS<n>:` and `error_codes: [n]`, as Entra ID
   * answers (https://learn.microsoft.com/entra/identity-platform/reference-error-codes, "Handling error codes");
   * the codes are those of the workload identity errors listed at
   * https://learn.microsoft.com/azure/devops/pipelines/release/troubleshoot-workload-identity (700016: no such
   * application in the tenant; 70021: no federated identity record matches the presented assertion).
   */
  token(form: URLSearchParams): TokenAnswer {
    this.tokenRequests += 1;
    const fail = (error: string, code: number, description: string): TokenAnswer => ({
      status: 400,
      body: { error, error_description: `AADSTS${code}: ${description}`, error_codes: [code] },
    });
    if (form.get('grant_type') !== 'client_credentials')
      return fail('unsupported_grant_type', 70003, 'only client_credentials is supported here.');
    const clientId = form.get('client_id') ?? '';
    if (clientId !== this.options.clientId) {
      return fail(
        'unauthorized_client',
        700016,
        `Application with identifier '${clientId}' was not found in the directory '${this.options.tenantId}'.`,
      );
    }
    if (
      form.get('client_assertion_type') !== 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer' ||
      form.get('client_assertion') !== this.options.assertion
    ) {
      return fail(
        'invalid_client',
        70021,
        'No matching federated identity record found for presented assertion.',
      );
    }
    const scope = form.get('scope') ?? '';
    const resource = scope.split(' ').find((s) => s.endsWith('/.default'));
    if (resource === undefined)
      return fail('invalid_scope', 1002012, 'The provided value for scope is not valid.');
    const token = randomBytes(24).toString('base64url');
    this.tokens.set(token, resource.slice(0, -'/.default'.length));
    const lifetime = this.options.tokenLifetimeSeconds ?? 3600;
    return {
      status: 200,
      body: { token_type: 'Bearer', expires_in: lifetime, ext_expires_in: lifetime, access_token: token },
    };
  }

  /** The audience of an issued token, or undefined for a token this stand-in never issued. */
  audienceOf(token: string): string | undefined {
    return this.tokens.get(token);
  }
}
