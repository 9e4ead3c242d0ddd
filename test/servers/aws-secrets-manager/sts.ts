import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { AwsError } from './errors.js';
import { verifySigV4, type TestCredential } from './sigv4.js';

/**
 * AWS STS `GetCallerIdentity` as the real service answers it, on the test server's own port (the
 * client is pointed here with the SDK's AWS_ENDPOINT_URL_STS). The AWS Query protocol: a form body
 * `Action=GetCallerIdentity&Version=2011-06-15`, signed for the service `sts`, answered in XML with
 * the caller's `UserId`, `Account` and `Arn`; it needs no IAM permission, so it answers for every
 * valid credential. Evidence: https://docs.aws.amazon.com/STS/latest/APIReference/API_GetCallerIdentity.html
 * (the example answer; "No permissions are required to perform this operation"), error bodies:
 * https://docs.aws.amazon.com/STS/latest/APIReference/CommonErrors.html
 */

const XMLNS = 'https://sts.amazonaws.com/doc/2011-06-15/';

/** True for a request that is an STS call (a form body, no JSON `X-Amz-Target`). */
export function isStsRequest(headers: IncomingHttpHeaders): boolean {
  return (
    headers['x-amz-target'] === undefined &&
    String(headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')
  );
}

/** The answer to one STS request: status and XML body. */
export function answerSts(
  request: { headers: IncomingHttpHeaders; body: Buffer },
  credentials: readonly TestCredential[],
  region: string,
): { status: number; body: string } {
  const requestId = randomUUID();
  try {
    const credential = verifySigV4(
      { method: 'POST', path: '/', ...request },
      credentials,
      region,
      Date.now(),
      'sts',
    );
    const form = new URLSearchParams(request.body.toString('utf8'));
    if (form.get('Action') !== 'GetCallerIdentity' || form.get('Version') !== '2011-06-15') {
      throw new AwsError(
        'InvalidAction',
        `The action or operation requested is invalid: ${form.get('Action') ?? ''}`,
      );
    }
    const arn = `arn:aws:sts::${credential.accountId}:assumed-role/pullsecret-adapter/test`;
    const body =
      `<GetCallerIdentityResponse xmlns="${XMLNS}"><GetCallerIdentityResult>` +
      `<Arn>${arn}</Arn><UserId>AROATESTPULLSECRET:test</UserId><Account>${credential.accountId}</Account>` +
      `</GetCallerIdentityResult><ResponseMetadata><RequestId>${requestId}</RequestId></ResponseMetadata></GetCallerIdentityResponse>`;
    return { status: 200, body };
  } catch (err) {
    const error =
      err instanceof AwsError ? err : new AwsError('InternalFailure', 'An internal error occurred.', 500);
    // STS names an unknown key InvalidClientTokenId (the JSON services' UnrecognizedClientException).
    const code = error.type === 'UnrecognizedClientException' ? 'InvalidClientTokenId' : error.type;
    const body = `<ErrorResponse xmlns="${XMLNS}"><Error><Type>Sender</Type><Code>${code}</Code><Message>${error.message}</Message></Error><RequestId>${requestId}</RequestId></ErrorResponse>`;
    return {
      status: error.status === 500 ? 500 : code === 'InvalidClientTokenId' ? 403 : error.status,
      body,
    };
  }
}
