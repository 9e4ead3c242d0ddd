import type {
  V1EnvVar,
  V1Job,
  V1OwnerReference,
  V1ResourceRequirements,
  V1Secret,
} from '@kubernetes/client-node';
import { PullSecretError } from '../errors/index.js';
import {
  assertClusterId,
  assertKubernetesName,
  MANAGED_BY,
  quoteIdentifier,
} from '../pullsecret/identifiers.js';

/**
 * The objects of Job mode: the data Secret `cluster-{id}-pullsecret-data` holding the
 * pull secret, and the Job `pullsecret-{id}-gen{generation}` that runs `pull-secret run-job
 * pull-secret` with it. Pure: no I/O.
 *
 * Ordering and ownership: the launcher creates the Job first, then the data Secret with an owner
 * reference to the Job's uid, so the TTL controller deleting the finished Job lets the garbage
 * collector delete the Secret too. The pod may therefore start before the Secret exists; the
 * kubelet reports CreateContainerConfigError and retries until it appears, which is transient and
 * bounded by `activeDeadlineSeconds`.
 */

/** Data key of the pull secret in the data Secret. */
export const DATA_SECRET_KEY = 'pullsecret';
/** Where the job writes its result file inside the pod (an emptyDir: the root filesystem is read-only). */
export const POD_RESULTS_PATH = '/tmp/result/result.json';
/**
 * Where the job writes its short report for the adapter (`terminationMessagePath`): the kubelet
 * copies the file (at most 4096 bytes) into the pod's status, where the adapter reads it
 * (`src/kube/job-report.ts`). A file the kubelet mounts: writable with a read-only root filesystem.
 */
const POD_TERMINATION_PATH = '/dev/termination-log';
/** Name of the job's container. */
export const JOB_CONTAINER_NAME = 'pull-secret';
/** `app` label of Job-mode Jobs and their pods. */
export const JOB_APP_LABEL = 'pullsecret-job';

/**
 * Label holding the cluster's rollback pin state when the Job was created (`none`, or a label-safe
 * token of the pin's version and time); a finished Job of another pin state is run again.
 */
export const JOB_PIN_LABEL = 'pullsecret.hyperfleet.io/pin';

/** The pin token of a cluster without a rollback pin (also what a Job without the label counts as). */
export const PIN_TOKEN_NONE = 'none';

const PIN_TOKEN = /^[A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?$/;
/** Exit code of the CLI for usage, configuration and input errors: retrying the pod cannot help. */
const CONFIG_ERROR_EXIT_CODE = 2;
/** Env variables the manifest sets itself; a caller's env map may not carry them. */
const RESERVED_ENV = new Set(['PULL_SECRET_DATA', 'RESULTS_PATH', 'TERMINATION_MESSAGE_PATH']);
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Defaults of the Job (small resources: the job is one short Node process). */
export const JOB_DEFAULTS = {
  namespace: 'hyperfleet-system',
  command: ['pull-secret', 'run-job', 'pull-secret'],
  serviceAccountName: 'pullsecret-adapter-job',
  runAsUser: 1000,
  backoffLimit: 2,
  activeDeadlineSeconds: 300,
  ttlSecondsAfterFinished: 3600,
  resources: { requests: { cpu: '50m', memory: '64Mi' }, limits: { cpu: '500m', memory: '256Mi' } },
  /**
   * NODE_OPTIONS of the job process unless the env map sets its own: a one-shot process does not
   * need V8's large young generation, and a small one keeps its peak RSS about 12 MB lower (with the
   * Secret Manager SDK loaded, under 80 MB) for about 10% more run time.
   */
  nodeOptions: '--max-semi-space-size=1',
} as const;

/** How Jobs are shaped; adapter configuration, the same for every cluster. */
export interface JobSettings {
  /** Container image holding the `pull-secret` CLI (required). */
  image: string;
  /** Namespace of the Job and its data Secret; default `hyperfleet-system`. */
  namespace?: string;
  /** Container command; default `pull-secret run-job pull-secret`. */
  command?: string[];
  serviceAccountName?: string;
  imagePullPolicy?: 'Always' | 'IfNotPresent' | 'Never';
  /** Pod retries before the Job fails; default 2. Exit code 2 (bad input or config) fails at once. */
  backoffLimit?: number;
  /** Wall-clock limit of the Job in seconds, pod start-up included; default 300. */
  activeDeadlineSeconds?: number;
  /** Seconds a finished Job (and with it the data Secret) is kept; default 3600. */
  ttlSecondsAfterFinished?: number;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  /**
   * Extra pod template metadata the store needs (its descriptor's `jobPod`); the Job's own labels
   * win over a store label of the same key.
   */
  pod?: { labels?: Readonly<Record<string, string>>; annotations?: Readonly<Record<string, string>> };
}

/** One cluster's Job. */
export interface PullSecretJobInput extends JobSettings {
  clusterId: string;
  /** The cluster generation this Job reconciles; part of the Job name. */
  generation: number;
  /**
   * Non-secret settings for the job (CLUSTER_ID, SECRET_STORE, store settings, ...), put into the
   * spec as plain values. PULL_SECRET_DATA and RESULTS_PATH are set by the manifest.
   */
  env: Readonly<Record<string, string>>;
  /** The cluster's rollback pin state (`JOB_PIN_LABEL`); default `none`. Never pull secret bytes. */
  pinToken?: string;
}

/** The Job an owner reference points at. */
interface JobOwner {
  name: string;
  uid: string;
}

/** Labels of the Job, its pods and its data Secret. */
function jobLabels(clusterId: string, generation: number): Record<string, string> {
  return { [MANAGED_BY.key]: MANAGED_BY.value, 'cluster-id': clusterId, generation: String(generation) };
}

/**
 * Label selector of a cluster's Jobs of any generation (`app=pullsecret-job`; the data Secret carries
 * the same labels). Cleanup finds the Jobs with it rather than by the latest name.
 * @throws PullSecretError IDENTIFIER_INVALID.
 */
export function clusterJobSelector(clusterId: string): string {
  assertClusterId(clusterId);
  return `${MANAGED_BY.key}=${MANAGED_BY.value},cluster-id=${clusterId},app=${JOB_APP_LABEL}`;
}

function assertGeneration(generation: number): void {
  if (!Number.isSafeInteger(generation) || generation < 0) {
    throw new PullSecretError(
      'IDENTIFIER_INVALID',
      `invalid cluster generation ${quoteIdentifier(String(generation))}: must be a whole number of at least 0`,
    );
  }
}

/**
 * `pullsecret-{cluster-id}-gen{generation}`.
 * @throws PullSecretError IDENTIFIER_INVALID when the id is not a cluster id, or when the name would
 *   exceed the 63 characters Kubernetes allows for Job names (the message says how long the id may be).
 */
export function pullSecretJobName(clusterId: string, generation: number): string {
  assertClusterId(clusterId);
  assertGeneration(generation);
  const name = `pullsecret-${clusterId}-gen${generation}`;
  if (name.length > 63) {
    const room = 63 - (name.length - clusterId.length);
    throw new PullSecretError(
      'IDENTIFIER_INVALID',
      `cluster id ${quoteIdentifier(clusterId)} is too long for Job mode: Job name ` +
        `${quoteIdentifier(name)} has ${name.length} characters and Kubernetes allows 63, so the id may ` +
        `have at most ${room} at generation ${generation}`,
    );
  }
  assertKubernetesName(name, 'Kubernetes Job name', 63);
  return name;
}

/** `cluster-{cluster-id}-pullsecret-data`. @throws PullSecretError IDENTIFIER_INVALID. */
export function jobDataSecretName(clusterId: string): string {
  assertClusterId(clusterId);
  const name = `cluster-${clusterId}-pullsecret-data`;
  assertKubernetesName(name, 'Kubernetes Secret name', 253);
  return name;
}

function namespaceOf(namespace: string | undefined): string {
  const ns = namespace ?? JOB_DEFAULTS.namespace;
  assertKubernetesName(ns, 'Kubernetes namespace', 63);
  return ns;
}

function nonNegative(value: number | undefined, fallback: number, what: string): number {
  const v = value ?? fallback;
  if (!Number.isSafeInteger(v) || v < 0)
    throw new PullSecretError(
      'CONFIG_INVALID',
      `invalid Job setting ${what}: must be a whole number of at least 0`,
    );
  return v;
}

function envVars(env: Readonly<Record<string, string>>, secretName: string): V1EnvVar[] {
  const vars: V1EnvVar[] = [];
  for (const [name, value] of Object.entries({ NODE_OPTIONS: JOB_DEFAULTS.nodeOptions, ...env }).sort(
    ([a], [b]) => (a < b ? -1 : a > b ? 1 : 0),
  )) {
    if (!ENV_NAME.test(name))
      throw new PullSecretError(
        'CONFIG_INVALID',
        `invalid Job environment variable name ${quoteIdentifier(name)}`,
      );
    if (RESERVED_ENV.has(name))
      throw new PullSecretError(
        'CONFIG_INVALID',
        `Job environment variable ${name} is set by the launcher and may not be passed in`,
      );
    vars.push({ name, value });
  }
  // The pull secret reaches the pod only through the data Secret, never as a literal in the spec.
  vars.push({
    name: 'PULL_SECRET_DATA',
    valueFrom: { secretKeyRef: { name: secretName, key: DATA_SECRET_KEY, optional: false } },
  });
  vars.push({ name: 'RESULTS_PATH', value: POD_RESULTS_PATH });
  vars.push({ name: 'TERMINATION_MESSAGE_PATH', value: POD_TERMINATION_PATH });
  return vars;
}

/**
 * The Job for one cluster generation: service account `pullsecret-adapter-job`, non-root UID 1000,
 * no privilege escalation, read-only root filesystem, all capabilities dropped, RuntimeDefault
 * seccomp; restartPolicy Never; backoff limit, deadline and TTL; small resources; the env map as
 * plain values (with NODE_OPTIONS defaulted) plus PULL_SECRET_DATA from the data Secret
 * (`secretKeyRef`) and RESULTS_PATH on an
 * emptyDir. Exit code 2 fails the Job at once through a pod failure policy.
 *
 * @throws PullSecretError IDENTIFIER_INVALID (cluster id, generation, Job name over 63 characters,
 *   namespace), CONFIG_MISSING (no image), CONFIG_INVALID (bad env name, reserved env name, bad number).
 */
export function buildPullSecretJob(input: PullSecretJobInput): V1Job {
  const name = pullSecretJobName(input.clusterId, input.generation);
  const namespace = namespaceOf(input.namespace);
  const secretName = jobDataSecretName(input.clusterId);
  if (input.image.trim() === '')
    throw new PullSecretError('CONFIG_MISSING', 'Job mode needs a container image for the pull-secret job');
  const pinToken = input.pinToken ?? PIN_TOKEN_NONE;
  if (!PIN_TOKEN.test(pinToken))
    throw new PullSecretError('CONFIG_INVALID', 'invalid Job pin token: must be a Kubernetes label value');
  const labels = { ...jobLabels(input.clusterId, input.generation), app: JOB_APP_LABEL };
  const resources: V1ResourceRequirements = {
    requests: { ...JOB_DEFAULTS.resources.requests, ...input.resources?.requests },
    limits: { ...JOB_DEFAULTS.resources.limits, ...input.resources?.limits },
  };
  const runAs = { runAsNonRoot: true, runAsUser: JOB_DEFAULTS.runAsUser, runAsGroup: JOB_DEFAULTS.runAsUser };
  const seccompProfile = { type: 'RuntimeDefault' };
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name, namespace, labels: { ...labels, [JOB_PIN_LABEL]: pinToken } },
    spec: {
      backoffLimit: nonNegative(input.backoffLimit, JOB_DEFAULTS.backoffLimit, 'backoffLimit'),
      activeDeadlineSeconds: nonNegative(
        input.activeDeadlineSeconds,
        JOB_DEFAULTS.activeDeadlineSeconds,
        'activeDeadlineSeconds',
      ),
      ttlSecondsAfterFinished: nonNegative(
        input.ttlSecondsAfterFinished,
        JOB_DEFAULTS.ttlSecondsAfterFinished,
        'ttlSecondsAfterFinished',
      ),
      podFailurePolicy: {
        rules: [
          // Bad input or configuration: another pod would fail the same way.
          {
            action: 'FailJob',
            onExitCodes: {
              containerName: JOB_CONTAINER_NAME,
              operator: 'In',
              values: [CONFIG_ERROR_EXIT_CODE],
            },
          },
          // A node drain or preemption is not the job's fault.
          { action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget', status: 'True' }] },
        ],
      },
      template: {
        metadata: {
          labels: { ...input.pod?.labels, ...labels },
          ...(input.pod?.annotations === undefined ? {} : { annotations: { ...input.pod.annotations } }),
        },
        spec: {
          restartPolicy: 'Never',
          serviceAccountName: input.serviceAccountName ?? JOB_DEFAULTS.serviceAccountName,
          // Service links would add env variables for every Service in the namespace.
          enableServiceLinks: false,
          securityContext: { ...runAs, seccompProfile },
          containers: [
            {
              name: JOB_CONTAINER_NAME,
              image: input.image,
              ...(input.imagePullPolicy === undefined ? {} : { imagePullPolicy: input.imagePullPolicy }),
              command: [...(input.command ?? JOB_DEFAULTS.command)],
              env: envVars(input.env, secretName),
              terminationMessagePath: POD_TERMINATION_PATH,
              terminationMessagePolicy: 'File',
              resources,
              securityContext: {
                ...runAs,
                allowPrivilegeEscalation: false,
                readOnlyRootFilesystem: true,
                privileged: false,
                capabilities: { drop: ['ALL'] },
                seccompProfile,
              },
              // A separate mount for the result directory: the job writes the file but does not create its directory.
              volumeMounts: [
                { name: 'tmp', mountPath: '/tmp' },
                { name: 'result', mountPath: '/tmp/result' },
              ],
            },
          ],
          volumes: [
            { name: 'tmp', emptyDir: { sizeLimit: '16Mi' } },
            { name: 'result', emptyDir: { sizeLimit: '1Mi' } },
          ],
        },
      },
    },
  };
}

/** Owner reference to the Job: not a controller, and never blocking the Job's deletion. */
function jobOwnerReference(owner: JobOwner): V1OwnerReference {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    name: owner.name,
    uid: owner.uid,
    controller: false,
    blockOwnerDeletion: false,
  };
}

/** One cluster's data Secret. */
interface JobDataSecretInput {
  clusterId: string;
  generation: number;
  /** Namespace of the Job; default `hyperfleet-system`. */
  namespace?: string;
  /** The pull secret bytes as given. */
  pullSecret: Uint8Array;
  /** The Job that owns the Secret (garbage collection follows the Job). */
  owner?: JobOwner;
}

/**
 * The Opaque data Secret `cluster-{id}-pullsecret-data` with key `pullsecret`, the Job's labels
 * (managed-by, cluster-id, generation, app), and, when given, an owner reference to the Job.
 * @throws PullSecretError IDENTIFIER_INVALID. Messages never hold the bytes.
 */
export function buildJobDataSecret(input: JobDataSecretInput): V1Secret {
  assertGeneration(input.generation);
  const secret: V1Secret = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: jobDataSecretName(input.clusterId),
      namespace: namespaceOf(input.namespace),
      labels: { ...jobLabels(input.clusterId, input.generation), app: JOB_APP_LABEL },
    },
    type: 'Opaque',
    data: { [DATA_SECRET_KEY]: Buffer.from(input.pullSecret).toString('base64') },
  };
  if (input.owner !== undefined && secret.metadata !== undefined)
    secret.metadata.ownerReferences = [jobOwnerReference(input.owner)];
  return secret;
}
