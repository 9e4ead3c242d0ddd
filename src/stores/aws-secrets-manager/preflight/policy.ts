import { awsPartition } from '../config.js';

/** The Secrets Manager actions the store uses (CreateSecret with tags needs TagResource too). */
export const REQUIRED_ACTIONS = [
  'secretsmanager:CreateSecret',
  'secretsmanager:TagResource',
  'secretsmanager:DescribeSecret',
  'secretsmanager:GetSecretValue',
  'secretsmanager:PutSecretValue',
  'secretsmanager:UpdateSecretVersionStage',
  'secretsmanager:ListSecretVersionIds',
  'secretsmanager:DeleteSecret',
  'secretsmanager:RestoreSecret',
] as const;

/** Name of the inline policy the fix attaches. */
const POLICY_NAME = 'pullsecret-secrets-manager';

/** What the policy is for: one account and region, and the optional customer-managed key. */
export interface PolicyTarget {
  accountId: string;
  region: string;
  kmsKeyId?: string | undefined;
}

/**
 * The least-privilege IAM policy of the adapter's role: the store's actions on secrets named
 * `hyperfleet-*` in one account and region (names are the ARN's last field, followed by AWS's random
 * suffix, hence the wildcard), plus, with a customer-managed key, the two KMS actions Secrets
 * Manager needs, only when called through Secrets Manager in that region.
 */
function leastPrivilegePolicy(target: PolicyTarget): string {
  const partition = awsPartition(target.region);
  const statements: object[] = [
    {
      Sid: 'PullSecrets',
      Effect: 'Allow',
      Action: [...REQUIRED_ACTIONS],
      Resource: `arn:${partition}:secretsmanager:${target.region}:${target.accountId}:secret:hyperfleet-*`,
    },
  ];
  if (target.kmsKeyId !== undefined) {
    const key =
      target.kmsKeyId.startsWith('arn:') && target.kmsKeyId.includes(':key/')
        ? target.kmsKeyId
        : `arn:${partition}:kms:${target.region}:${target.accountId}:key/*`;
    statements.push({
      Sid: 'PullSecretsKey',
      Effect: 'Allow',
      Action: ['kms:GenerateDataKey', 'kms:Decrypt'],
      Resource: key,
      Condition: { StringEquals: { 'kms:ViaService': `secretsmanager.${target.region}.amazonaws.com` } },
    });
  }
  return JSON.stringify({ Version: '2012-10-17', Statement: statements });
}

/** The exact command that attaches the policy to the adapter's role. */
export function putRolePolicyCommand(roleName: string, target: PolicyTarget): string {
  return (
    `aws iam put-role-policy --role-name ${roleName} --policy-name ${POLICY_NAME} --policy-document ` +
    `'${leastPrivilegePolicy(target)}'`
  );
}
