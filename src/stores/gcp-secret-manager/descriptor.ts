import type { Status } from 'google-gax';
import { schemaProblems } from '../../config/problems.js';
import type { StoreFactory } from '../factory.js';
import {
  GCP_PAYLOAD_LIMIT_BYTES,
  gcpSharedSettingsSchema,
  gcpStoreConfigSchema,
  gcpStoreEnv,
  type GcpStoreConfig,
} from './config.js';

/**
 * Secret Manager's request quotas per project and minute (its "quotas and limits" page): 600
 * writes (any mutating call), 600 reads (any other call but access: metadata, lists) and 90,000
 * accesses (AccessSecretVersion).
 */
const QUOTA_PER_MINUTE = 600;
const ACCESSES_PER_MINUTE = 90_000;

/**
 * gRPC status name (gax's `Status`, imported as a type only so the SDK still loads on first use) →
 * the HTTP code Google's APIs map it to, so alerts written on `status_code="429"` work as written.
 */
const GRPC_TO_HTTP: Readonly<Record<keyof typeof Status, string>> = {
  OK: '200',
  INVALID_ARGUMENT: '400',
  FAILED_PRECONDITION: '400',
  OUT_OF_RANGE: '400',
  UNAUTHENTICATED: '401',
  PERMISSION_DENIED: '403',
  NOT_FOUND: '404',
  ALREADY_EXISTS: '409',
  ABORTED: '409',
  RESOURCE_EXHAUSTED: '429',
  CANCELLED: '499',
  INTERNAL: '500',
  UNKNOWN: '500',
  DATA_LOSS: '500',
  UNIMPLEMENTED: '501',
  UNAVAILABLE: '503',
  DEADLINE_EXCEEDED: '504',
};

/**
 * The GCP Secret Manager store (`SECRET_STORE=gcp`), declared without its SDK: the SDK is loaded by
 * `create` on first use, and the preflight checks by `preflight.load`. Only this folder imports
 * the Secret Manager SDK.
 */
export const gcpStoreFactory: StoreFactory<GcpStoreConfig> = {
  kind: 'gcp',
  title: 'GCP Secret Manager',
  configSchema: gcpStoreConfigSchema,
  env: gcpStoreEnv,
  selectedBy: Object.keys(gcpStoreEnv),
  maxPayloadBytes: GCP_PAYLOAD_LIMIT_BYTES,
  scope: {
    settingKeys: ['projectId'],
    noun: 'GCP project',
    location: (scope) => `projects/${scope.projectId ?? ''}`,
    statusData: (scope) => ({ gcpProject: scope.projectId ?? '' }),
    logFields: (scope) => ({ gcp_project: scope.projectId ?? '' }),
  },
  quotas: {
    writesPerMinute: QUOTA_PER_MINUTE,
    readsPerMinute: QUOTA_PER_MINUTE,
    accessesPerMinute: ACCESSES_PER_MINUTE,
  },
  apiCalls: {
    methods: [
      'GetSecret',
      'CreateSecret',
      'AccessSecretVersion',
      'AddSecretVersion',
      'ListSecretVersions',
      'DeleteSecret',
      'TestIamPermissions',
      'DisableSecretVersion',
      'EnableSecretVersion',
      'DestroySecretVersion',
    ],
    codes: [
      'OK',
      'NOT_FOUND',
      'ALREADY_EXISTS',
      'PERMISSION_DENIED',
      'RESOURCE_EXHAUSTED',
      'UNAVAILABLE',
      'DEADLINE_EXCEEDED',
    ],
    ownCounter: {
      name: 'pullsecret_gcp_api_calls_total',
      help: 'GCP Secret Manager API calls by HTTP-equivalent status code',
      label: 'status_code',
      values: ['200', '400', '401', '403', '404', '409', '429', '499', '500', '503', '504'],
      valueOf: (code) => GRPC_TO_HTTP[code as keyof typeof Status] ?? '500',
    },
  },
  preflight: {
    summary: 'credentials, the Secret Manager API and the four IAM permissions in a customer GCP project',
    help: [
      'Checks the permissions of whoever runs it: run it as the adapter (kubectl exec into its pod) or with',
      "Application Default Credentials impersonating the adapter's Google service account.",
      'SECRET_MANAGER_ENDPOINT, SECRET_MANAGER_INSECURE and GCP_CALL_TIMEOUT_MS apply as for run-job.',
      'Makes at most two read-only calls.',
    ].join('\n'),
    options: [
      {
        flags: '--project <id>',
        description: 'customer GCP project id that will hold the pull secrets (required)',
      },
      {
        flags: '--service-account <email>',
        description:
          'Google service account the adapter acts as, for the printed fixes (default ' +
          'pullsecret-manager@PROJECT.iam.gserviceaccount.com)',
      },
      {
        flags: '--secret <id>',
        description: 'test the permissions on this existing secret instead of a probe name (an exact answer)',
      },
      {
        flags: '--workload-pool <pool>',
        description:
          "Workload Identity pool of the adapter's cluster, CLUSTER_PROJECT.svc.id.goog, for the printed fixes",
      },
      {
        flags: '--kubernetes-service-account <namespace/name>',
        description: 'Kubernetes service account the adapter runs as',
        defaultValue: 'hyperfleet-system/pullsecret-adapter',
      },
    ],
    load: async () => (await import('./preflight/run-cli.js')).runGcpPreflight,
  },
  validate: (settings) => schemaProblems(gcpSharedSettingsSchema, settings),
  create: async (config, hooks) => (await import('./create-store.js')).createGcpStore(config, hooks),
  preload: async () => {
    await import('./create-store.js');
    (await import('./sdk-client.js')).warmSdkClient();
  },
};
