import { join } from 'node:path';
import {
  adcLoginCommand,
  workloadIdentityBindingCommand,
  type KubernetesServiceAccount,
} from './gcloud-commands.js';
import type { CheckResult } from './types.js';

/** What the credentials check looks at; injected so tests need no real home directory. */
export interface CredentialsContext {
  env: NodeJS.ProcessEnv;
  homeDir: string;
  /** Plaintext to a loopback test endpoint: no credentials are used at all. */
  insecure: boolean;
  serviceAccount: string;
  workloadPool: string;
  kubernetesServiceAccount: KubernetesServiceAccount;
  /** Reads a file as text; rejects like `fs.readFile`. */
  readFile(path: string): Promise<string>;
}

/** Credential file types google-auth-library understands; `service_account` is a long-lived key. */
const KNOWN_TYPES = new Set([
  'service_account',
  'authorized_user',
  'external_account',
  'external_account_authorized_user',
  'impersonated_service_account',
]);

/** gcloud's well-known Application Default Credentials file. */
export function wellKnownAdcPath(env: NodeJS.ProcessEnv, homeDir: string): string {
  const configDir =
    env.CLOUDSDK_CONFIG !== undefined && env.CLOUDSDK_CONFIG !== ''
      ? env.CLOUDSDK_CONFIG
      : join(homeDir, '.config', 'gcloud');
  return join(configDir, 'application_default_credentials.json');
}

function result(status: CheckResult['status'], detail: string, fix: string[] = []): CheckResult {
  return { id: 'credentials', title: 'credentials', status, detail, fix };
}

/** The `type` of a credential file; never reads or returns anything else from it. */
async function credentialType(
  ctx: CredentialsContext,
  path: string,
): Promise<{ type?: string; problem?: string }> {
  let text: string;
  try {
    text = await ctx.readFile(path);
  } catch (err) {
    return { problem: `cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})` };
  }
  try {
    const type = (JSON.parse(text) as { type?: unknown } | null)?.type;
    return typeof type === 'string' && KNOWN_TYPES.has(type)
      ? { type }
      : { problem: 'is not a Google credential file (no known "type")' };
  } catch {
    return { problem: 'is not valid JSON' };
  }
}

function fromFile(
  source: string,
  path: string,
  found: { type?: string; problem?: string },
  ctx: CredentialsContext,
): CheckResult {
  if (found.problem !== undefined) {
    return result('fail', `${source} ${path} ${found.problem}`, [adcLoginCommand(ctx.serviceAccount)]);
  }
  if (found.type === 'service_account') {
    // Works, but it is a long-lived key; Workload Identity keeps keys out of the platform entirely.
    return result(
      'warn',
      `${source} ${path} holds a service account key; Workload Identity avoids long-lived keys`,
      [workloadIdentityBindingCommand(ctx.serviceAccount, ctx.workloadPool, ctx.kubernetesServiceAccount)],
    );
  }
  return result('pass', `${source} ${path} (${found.type ?? 'unknown'})`);
}

/**
 * Finds where Google credentials would come from, the way Application Default Credentials looks:
 * GOOGLE_APPLICATION_CREDENTIALS, gcloud's well-known file, then the metadata server (GKE Workload
 * Identity). Makes no network call: the metadata server is only assumed inside Kubernetes, and
 * the API check proves the credentials work. Never throws.
 */
export async function checkCredentials(ctx: CredentialsContext): Promise<CheckResult> {
  if (ctx.insecure) return result('pass', 'not needed: plaintext connection to a loopback test endpoint');
  const explicit = ctx.env.GOOGLE_APPLICATION_CREDENTIALS;
  if (explicit !== undefined && explicit !== '') {
    return fromFile('GOOGLE_APPLICATION_CREDENTIALS', explicit, await credentialType(ctx, explicit), ctx);
  }
  const wellKnown = wellKnownAdcPath(ctx.env, ctx.homeDir);
  const found = await credentialType(ctx, wellKnown);
  if (found.type !== undefined || !(found.problem ?? '').startsWith('cannot be read')) {
    return fromFile('gcloud credentials file', wellKnown, found, ctx);
  }
  const metadataOff = (ctx.env.METADATA_SERVER_DETECTION ?? '').toLowerCase() === 'none';
  const inKubernetes = (ctx.env.KUBERNETES_SERVICE_HOST ?? '') !== '';
  if (inKubernetes && !metadataOff) {
    return result('pass', 'GKE metadata server (Workload Identity); the API check below proves it', []);
  }
  const where = metadataOff
    ? 'and METADATA_SERVER_DETECTION=none rules out the metadata server'
    : 'the metadata server of GCE/GKE is the only source left';
  return result(
    metadataOff ? 'fail' : 'warn',
    `no credential file found (GOOGLE_APPLICATION_CREDENTIALS unset, no ${wellKnown}), ${where}`,
    [adcLoginCommand(ctx.serviceAccount)],
  );
}
