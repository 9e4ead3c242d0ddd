import { schemaProblems } from '../../config/problems.js';
import type { StoreFactory } from '../factory.js';
import {
  AWS_PAYLOAD_LIMIT_BYTES,
  awsLocation,
  awsSharedSettingsSchema,
  awsStoreConfigSchema,
  awsStoreEnv,
  type AwsStoreConfig,
} from './config.js';

/**
 * Secrets Manager's request quotas per account and region ("AWS Secrets Manager quotas",
 * https://docs.aws.amazon.com/secretsmanager/latest/userguide/reference_limits.html): PutSecretValue,
 * UpdateSecretVersionStage (and UpdateSecret, replication) share 50 per second; CreateSecret,
 * DeleteSecret, RestoreSecret and ListSecretVersionIds have 50 per second each; DescribeSecret
 * 40,000 and GetSecretValue 10,000 per second (payload reads, not paced). The pacer takes the
 * narrowest figure of each kind: 50 per second = 3,000 per minute. Cross-account calls count
 * against the caller's account; each region has its own quotas.
 */
const QUOTA_PER_MINUTE = 50 * 60;

/**
 * The AWS Secrets Manager store (`SECRET_STORE=aws`), declared without its SDK: `create` loads the
 * SDK on first use, `preflight.load` the checks. Only this folder imports the AWS SDK.
 */
export const awsStoreFactory: StoreFactory<AwsStoreConfig> = {
  kind: 'aws',
  title: 'AWS Secrets Manager',
  configSchema: awsStoreConfigSchema,
  env: awsStoreEnv,
  // Every variable is ours (AWS_SECRETS_*): the SDK's AWS_REGION / AWS_ACCOUNT_ID never select this store.
  selectedBy: Object.keys(awsStoreEnv),
  maxPayloadBytes: AWS_PAYLOAD_LIMIT_BYTES,
  scope: {
    settingKeys: ['accountId', 'region'],
    noun: 'AWS account and region',
    location: (scope) => awsLocation(scope.accountId ?? '', scope.region ?? ''),
    statusData: (scope) => ({ awsAccountId: scope.accountId ?? '', awsRegion: scope.region ?? '' }),
    logFields: (scope) => ({ aws_account_id: scope.accountId ?? '', aws_region: scope.region ?? '' }),
  },
  quotas: { writesPerMinute: QUOTA_PER_MINUTE, readsPerMinute: QUOTA_PER_MINUTE },
  apiCalls: {
    methods: [
      'GetSecretValue',
      'DescribeSecret',
      'CreateSecret',
      'PutSecretValue',
      'UpdateSecretVersionStage',
      'ListSecretVersionIds',
      'DeleteSecret',
      'RestoreSecret',
    ],
    codes: [
      'OK',
      'ResourceNotFoundException',
      'ResourceExistsException',
      'AccessDeniedException',
      'ThrottlingException',
      'InternalServiceError',
      'TimeoutError',
    ],
  },
  preflight: {
    summary:
      'credentials and the Secrets Manager actions of the adapter in a customer AWS account and region',
    help: [
      'Checks the identity of whoever runs it: run it as the adapter (kubectl exec into its pod) or with the',
      "adapter's IAM role assumed. AWS_SECRETS_ENDPOINT and AWS_SECRETS_CALL_TIMEOUT_MS apply as for run-job.",
      'Makes at most three read-only Secrets Manager calls; prints the IAM policy to attach when one is refused.',
    ].join('\n'),
    options: [
      {
        flags: '--account <id>',
        description:
          'customer AWS account (12 digits) that will hold the pull secrets (required with --store aws)',
      },
      {
        flags: '--region <name>',
        description: 'AWS region that will hold the pull secrets (required with --store aws)',
      },
      {
        flags: '--role-name <name>',
        description: "the adapter's IAM role, for the printed fix (default pullsecret-adapter)",
      },
    ],
    load: async () => (await import('./preflight/run-cli.js')).runAwsPreflight,
  },
  validate: (settings) => schemaProblems(awsSharedSettingsSchema, settings),
  create: async (config, hooks) => (await import('./create-store.js')).createAwsStore(config, hooks),
};
