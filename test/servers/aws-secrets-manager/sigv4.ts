import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { AwsError } from './errors.js';

/** One access key the server knows, and the account it belongs to. */
export interface TestCredential {
  accessKeyId: string;
  secretAccessKey: string;
  accountId: string;
}

const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');
const hmac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data).digest();

/** How far a request's X-Amz-Date may be from the server's clock (AWS: 15 minutes). */
const MAX_SKEW_MS = 15 * 60 * 1000;

/** The signing key of SigV4: HMAC chain over date, region, service and `aws4_request`. */
export function signingKey(secretAccessKey: string, date: string, region: string, service: string): Buffer {
  return hmac(hmac(hmac(hmac(`AWS4${secretAccessKey}`, date), region), service), 'aws4_request');
}

/** Canonical header value: trimmed, inner runs of spaces collapsed (SigV4). */
function canonicalValue(value: string | string[] | undefined): string {
  const joined = Array.isArray(value) ? value.join(',') : (value ?? '');
  return joined.trim().replace(/\s+/g, ' ');
}

/** The canonical request of a POST to `path` with an empty query, as SigV4 defines it. */
export function canonicalRequest(
  method: string,
  path: string,
  headers: IncomingHttpHeaders,
  signedHeaders: readonly string[],
  body: Buffer,
): string {
  // The hash of the body actually received (as AWS computes it for JSON services), so a changed body fails the signature.
  const payloadHash = sha256(body);
  const canonicalHeaders = signedHeaders.map((h) => `${h}:${canonicalValue(headers[h])}\n`).join('');
  return [method, path, '', canonicalHeaders, signedHeaders.join(';'), payloadHash].join('\n');
}

/**
 * Verifies the SigV4 `Authorization` header of a request the way AWS does, and returns the
 * credential that signed it. Errors carry AWS's types and messages: a missing header
 * (MissingAuthenticationTokenException), an unknown key (UnrecognizedClientException), a scope of
 * another region or service, an expired date, or a signature made with the wrong secret
 * (InvalidSignatureException).
 */
export function verifySigV4(
  request: { method: string; path: string; headers: IncomingHttpHeaders; body: Buffer },
  credentials: readonly TestCredential[],
  region: string,
  now = Date.now(),
  expectedService = 'secretsmanager',
): TestCredential {
  const authorization = request.headers.authorization;
  if (typeof authorization !== 'string' || authorization === '')
    throw new AwsError('MissingAuthenticationTokenException', 'Missing Authentication Token', 400);
  const match =
    /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$/.exec(
      authorization,
    );
  if (match === null)
    throw new AwsError(
      'IncompleteSignatureException',
      `Authorization header requires 'Credential', 'SignedHeaders' and 'Signature' parameters.`,
      400,
    );
  const [, accessKeyId = '', date = '', scopeRegion = '', service = '', signed = '', signature = ''] = match;
  const credential = credentials.find((c) => c.accessKeyId === accessKeyId);
  if (credential === undefined)
    throw new AwsError(
      'UnrecognizedClientException',
      'The security token included in the request is invalid.',
      400,
    );
  if (service !== expectedService)
    throw new AwsError(
      'InvalidSignatureException',
      `Credential should be scoped to correct service: '${expectedService}'.`,
      400,
    );
  if (scopeRegion !== region)
    throw new AwsError('InvalidSignatureException', `Credential should be scoped to a valid region. `, 400);
  const amzDate = request.headers['x-amz-date'];
  if (typeof amzDate !== 'string' || !amzDate.startsWith(date))
    throw new AwsError(
      'IncompleteSignatureException',
      'Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP.',
      400,
    );
  const at = Date.parse(
    amzDate.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, '$1-$2-$3T$4:$5:$6Z'),
  );
  if (Number.isNaN(at) || Math.abs(now - at) > MAX_SKEW_MS)
    throw new AwsError(
      'InvalidSignatureException',
      'Signature expired: the request time is too far from the current time.',
      400,
    );
  const signedHeaders = signed.split(';');
  if (!signedHeaders.includes('host') || !signedHeaders.includes('x-amz-date'))
    throw new AwsError('InvalidSignatureException', "'Host' or 'X-Amz-Date' must be a signed header.", 400);
  const scope = `${date}/${scopeRegion}/${service}/aws4_request`;
  const stringToSign = [
    'AWS4-HMAC-SHA256',
    amzDate,
    scope,
    sha256(canonicalRequest(request.method, request.path, request.headers, signedHeaders, request.body)),
  ].join('\n');
  const expected = createHmac('sha256', signingKey(credential.secretAccessKey, date, scopeRegion, service))
    .update(stringToSign)
    .digest();
  if (!timingSafeEqual(expected, Buffer.from(signature, 'hex'))) {
    throw new AwsError(
      'InvalidSignatureException',
      'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.',
      400,
    );
  }
  return credential;
}
