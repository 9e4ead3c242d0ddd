import type { Dispatcher } from 'undici';
import { redactor } from '../pullsecret/redact.js';
import { parseChallenges, type Challenge } from './challenge.js';
import { basicAuthorization } from './credentials.js';
import { RegistryNetworkError, registryGet, type RegistryAnswer } from './http.js';

/** What a registry said about one credential. */
export type LoginOutcome = 'accepted' | 'rejected' | 'unreachable';

export interface LoginResult {
  outcome: LoginOutcome;
  /** Why, in words safe to log and report (HTTP status, error code); never a credential. */
  detail: string;
  /** HTTP requests made (registry and token service). */
  roundTrips: number;
}

interface LoginOptions {
  timeoutMs: number;
  agent?: Dispatcher;
  signal?: AbortSignal;
  /** Called once per HTTP request (for counting), with the host it went to. */
  onRequest?: (host: string) => void;
}

/**
 * `docker login` by the Docker Registry HTTP API v2: `GET https://{host}/v2/`; a 401 names the
 * scheme in `WWW-Authenticate`. `Basic`: the same request again with the credentials. `Bearer`: a
 * token from the challenge's realm (`service` and `scope` as given, the credentials as Basic), then
 * `GET /v2/` with it. A 200 at the end is `accepted`; 401/403 to the credentials (at the registry
 * or the token service) is `rejected`; no answer, a timeout, 429, 5xx or an answer outside the
 * protocol is `unreachable` (the credentials were not judged).
 *
 * Every Authorization value (and a token) is registered with the redactor while the check runs.
 * Never throws.
 */
export async function checkLogin(
  host: string,
  username: string,
  password: string,
  options: LoginOptions,
): Promise<LoginResult> {
  const basic = basicAuthorization(username, password);
  const releases = [redactor.register([basic, basic.slice('Basic '.length)])];
  let roundTrips = 0;
  const get = async (url: URL, authorization?: string): Promise<RegistryAnswer> => {
    roundTrips += 1;
    options.onRequest?.(url.host);
    return registryGet(url, {
      authorization,
      timeoutMs: options.timeoutMs,
      agent: options.agent,
      signal: options.signal,
    });
  };
  const done = (outcome: LoginOutcome, detail: string): LoginResult => ({ outcome, detail, roundTrips });
  try {
    const base = new URL(`https://${host}/v2/`);
    const first = await get(base);
    if (first.status === 200) return done('accepted', 'the registry needs no credentials (200 without them)');
    if (first.status !== 401) return done('unreachable', unexpected('GET /v2/', first.status));
    const challenges = parseChallenges(headerOf(first, 'www-authenticate'));
    const bearer = challenges.find((c) => c.scheme === 'bearer');
    const basicChallenge = challenges.find((c) => c.scheme === 'basic');
    if (bearer !== undefined) {
      const token = await fetchToken(bearer, basic, get);
      if ('outcome' in token) return done(token.outcome, token.detail);
      const authorization = `Bearer ${token.token}`;
      releases.push(redactor.register([token.token, authorization]));
      return done(...judge(await get(base, authorization), 'GET /v2/ with the token'));
    }
    if (basicChallenge !== undefined)
      return done(...judge(await get(base, basic), 'GET /v2/ with Basic credentials'));
    return done('unreachable', `GET /v2/ answered 401 without a Basic or Bearer challenge`);
  } catch (err) {
    if (err instanceof RegistryNetworkError) return done('unreachable', err.message);
    return done('unreachable', 'unexpected error');
  } finally {
    for (const release of releases) release();
  }
}

/** Verdict on an answer to credentials. */
function judge(answer: RegistryAnswer, what: string): [LoginOutcome, string] {
  if (answer.status === 200) return ['accepted', `${what}: 200`];
  if (answer.status === 401 || answer.status === 403) return ['rejected', `${what}: ${answer.status}`];
  return ['unreachable', unexpected(what, answer.status)];
}

function unexpected(what: string, status: number): string {
  return `${what} answered ${status}${status === 429 || status >= 500 ? '' : ' (not a registry answer to a login)'}`;
}

function headerOf(answer: RegistryAnswer, name: string): string | undefined {
  const value = answer.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

/** The token of a Bearer challenge, got with the Basic credentials, or the verdict when there is none. */
async function fetchToken(
  challenge: Challenge,
  basic: string,
  get: (url: URL, authorization?: string) => Promise<RegistryAnswer>,
): Promise<{ token: string } | { outcome: LoginOutcome; detail: string }> {
  const { realm, service, scope } = challenge.params;
  let url: URL;
  try {
    url = new URL(realm ?? '');
  } catch {
    return { outcome: 'unreachable', detail: 'the Bearer challenge has no usable realm' };
  }
  // Credentials go to the token service only over TLS.
  if (url.protocol !== 'https:')
    return {
      outcome: 'unreachable',
      detail: `the token realm ${url.host} is not https; credentials are not sent to it`,
    };
  if (service !== undefined) url.searchParams.set('service', service);
  if (scope !== undefined)
    for (const s of scope.split(' ')) if (s.length > 0) url.searchParams.append('scope', s);
  const answer = await get(url, basic);
  if (answer.status === 401 || answer.status === 403)
    return { outcome: 'rejected', detail: `token service ${url.host} answered ${answer.status}` };
  if (answer.status !== 200)
    return { outcome: 'unreachable', detail: unexpected(`token service ${url.host}`, answer.status) };
  let body: unknown;
  try {
    body = JSON.parse(answer.body);
  } catch {
    return { outcome: 'unreachable', detail: `token service ${url.host} answered 200 without JSON` };
  }
  const fields = body !== null && typeof body === 'object' ? (body as Record<string, unknown>) : {};
  const token =
    typeof fields.token === 'string' && fields.token.length > 0 ? fields.token : fields.access_token;
  if (typeof token !== 'string' || token.length === 0)
    return { outcome: 'unreachable', detail: `token service ${url.host} answered 200 without a token` };
  return { token };
}
