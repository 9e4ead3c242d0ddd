import { readFileSync } from 'node:fs';

/** Fixtures copied from the project's shared fixtures (test/fixtures). */
function fixture(path: string): string {
  return readFileSync(new URL(`../fixtures/${path}`, import.meta.url), 'utf8').trim();
}

/** A valid two-registry pull secret. */
export const VALID_PULL_SECRET = fixture('pull-secrets/valid.json');

/** Canary credentials for leak tests (see test/fixtures/pull-secrets/README.md). */
export const CANARY_PULL_SECRET = fixture('pull-secrets/canary.json');

/** A canary admin API token (32 bytes, base64): tokens are credentials too. */
export const CANARY_ADMIN_TOKEN = 'Y2FuYXJ5LWFkbWluLXRva2VuLTdRMnYtMzItYnl0ZXM=';

/** Every form of the canary that must never appear outside the secret itself (or the token file). */
export const CANARY_NEEDLES = [
  CANARY_PULL_SECRET,
  'cHVsbGJvdDpzM2NyM3QtY2FuYXJ5LTdRMnY=',
  'pullbot:s3cr3t-canary-7Q2v',
  's3cr3t-canary-7Q2v',
  CANARY_ADMIN_TOKEN,
];

/** The first canary form found in `text`, or undefined. */
export function findCanary(text: string): string | undefined {
  return CANARY_NEEDLES.find((needle) => text.includes(needle));
}

/** Reads a JSON fixture. */
export function jsonFixture<T>(path: string): T {
  return JSON.parse(fixture(path)) as T;
}
