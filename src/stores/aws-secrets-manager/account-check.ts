import { GetCallerIdentityCommand, type STSClient } from '@aws-sdk/client-sts';
import { PullSecretError } from '../../errors/index.js';
import { awsCall, type AwsApiCallOptions } from './api-call.js';

/** What the refusal says after the two accounts (one literal, so the documented message can be found). */
const MISMATCH_ADVICE =
  "(AWS_SECRETS_ACCOUNT_ID, or the cluster spec's aws.accountId): nothing was written. Give the pod an IAM role of the configured account (IRSA or EKS Pod Identity; docs/aws-identity.md), or fix the account id.";

/**
 * Whose credentials these are, known before the first write: STS GetCallerIdentity (it needs no IAM
 * permission: https://docs.aws.amazon.com/STS/latest/APIReference/API_GetCallerIdentity.html), asked
 * once per store client; after a match no further call is made. Credentials of another account are
 * refused with nothing written there.
 */
export class AccountCheck {
  private verified = false;

  constructor(
    private readonly sts: STSClient,
    private readonly accountId: string,
  ) {}

  /**
   * Resolves once the caller's account is the configured one.
   * @throws CONFIG_INVALID for another account (permanent); the classified STS error otherwise.
   */
  async assert(options: AwsApiCallOptions): Promise<void> {
    if (this.verified) return;
    const target = { method: 'GetCallerIdentity' as const, resource: `arn:aws:iam::${this.accountId}:root` };
    const identity = await awsCall(target, options, (abortSignal) =>
      this.sts.send(new GetCallerIdentityCommand({}), { abortSignal }),
    );
    if (identity.Account !== this.accountId) {
      const found = `the AWS credentials belong to account ${String(identity.Account)}, but the store is configured for account ${this.accountId}`;
      throw new PullSecretError('CONFIG_INVALID', `${found} ${MISMATCH_ADVICE}`);
    }
    this.verified = true;
  }

  close(): void {
    this.sts.destroy();
  }
}
