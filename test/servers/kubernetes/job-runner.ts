import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ApiOperations } from './operations.js';
import type { StoreEvent } from './store.js';
import { isRecord, RESOURCE_TYPES, type KubeObject, type ResourceType } from './types.js';

/** How the test server runs Jobs. */
export interface RunJobsOptions {
  /**
   * Stands in for the image's executable: replaces the container's `command[0]`; the rest of its
   * command and its args follow. E.g. `[process.execPath, '--import', tsx, 'src/cli/main.ts']`.
   */
  command: string[];
  /**
   * What the cluster would provide by other means (e.g. the path of a persistent volume). The Job's
   * own env wins over it, as in a pod. KUBECONFIG is preset (the Job's service account, or the administrator; see the server's `rbac`).
   */
  env?: Record<string, string>;
  /**
   * Mutating webhooks: `env` is injected into pods whose template carries every one of `podLabels`,
   * as the AKS workload identity webhook does for `azure.workload.identity/use: "true"`. The Job's
   * own env wins over it.
   */
  webhooks?: ReadonlyArray<{
    podLabels: Readonly<Record<string, string>>;
    env: Readonly<Record<string, string>>;
  }>;
  /**
   * Host paths every pod sees as they are, standing in for a persistent volume the cluster mounts at
   * the same path (e.g. a shared local store). An env value under one of them is never taken for a
   * path in the pod's emptyDir, even where the host path happens to start with its mount path
   * (a checkout under /tmp).
   */
  persistentPaths?: readonly string[];
  /** Working directory of the child; default a fresh directory per pod. */
  cwd?: string;
  /** Called after every pod run, with its output. */
  onRun?: (run: JobRun) => void;
  /** Interval of the poll for referenced Secrets; default 20 ms. */
  pollMs?: number;
}

/** One pod of a Job, run as a child process. */
export interface JobRun {
  namespace: string;
  job: string;
  pod: string;
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  /** Host directories standing in for the pod's emptyDir mounts, by mount path. */
  volumes: Record<string, string>;
}

interface PodOutcome {
  code: number | null;
  signal: string | null;
}

const JOBS = RESOURCE_TYPES.find((r) => r.resource === 'jobs') as ResourceType;
const SECRETS = RESOURCE_TYPES.find((r) => r.resource === 'secrets') as ResourceType;
const PODS = RESOURCE_TYPES.find((r) => r.resource === 'pods') as ResourceType;
/** The kubelet keeps at most this many bytes of a termination message. */
const TERMINATION_MESSAGE_MAX = 4096;
/** Settings that keep a child on loopback whatever the Job says. */
const LOOPBACK_ENV = {
  METADATA_SERVER_DETECTION: 'none',
  GOOGLE_CLOUD_DISABLE_DIRECT_PATH: 'true',
  AWS_EC2_METADATA_DISABLED: 'true',
};
const KILL_GRACE_MS = 2000;

function rec(value: unknown): Record<string, unknown> {
  return isRecord(value) ? value : {};
}

function list(value: unknown): Record<string, unknown>[] {
  return Array.isArray(value) ? value.filter(isRecord) : [];
}

function str(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.map(str) : [];
}

function now(): string {
  return new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * Plays the Job controller and kubelet of the test server: for each created Job, records a start
 * (`startTime`, `active: 1`), waits until the Secrets its env references exist (a real pod sits in
 * CreateContainerConfigError meanwhile), runs the configured command with the resolved env
 * (`ready: 1` while it runs), and
 * marks the Job Complete (exit 0) or retries until `backoffLimit`, then marks it Failed. Honours
 * `podFailurePolicy` rules on exit codes (FailJob, Ignore, Count) and `activeDeadlineSeconds`.
 * Messages name exit codes, never output. Only the first container runs; emptyDir mounts are
 * directories per pod, and env values under a mount path are rewritten to them. Not modelled:
 * suspended Jobs, backoff delays between pods, parallelism, `envFrom`, ConfigMap and field refs.
 */
export class JobRunner {
  private readonly running = new Map<string, { cancel: () => void; done: Promise<void> }>();
  private readonly finished: JobRun[] = [];
  private stopped = false;

  constructor(
    private readonly ops: ApiOperations,
    private readonly dir: string,
    /** The kubeconfig given to a pod as KUBECONFIG, standing in for its service account's token. */
    private readonly kubeconfigOf: (namespace: string, serviceAccount: string) => Promise<string>,
    private readonly options: RunJobsOptions,
  ) {}

  start(): void {
    this.ops.store.events.on('event', this.onEvent);
  }

  runs(): readonly JobRun[] {
    return [...this.finished];
  }

  /** Stops watching, kills running pods and waits for them. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.ops.store.events.off('event', this.onEvent);
    const all = [...this.running.values()];
    for (const r of all) r.cancel();
    await Promise.all(all.map((r) => r.done));
  }

  private readonly onEvent = (event: StoreEvent): void => {
    if (event.rt !== JOBS || this.stopped) return;
    const key = `${event.object.metadata.namespace ?? ''}/${event.object.metadata.uid ?? ''}`;
    if (event.type === 'DELETED' || event.object.metadata.deletionTimestamp !== undefined)
      this.running.get(key)?.cancel();
    if (event.type !== 'ADDED' || rec(event.object.spec).suspend === true) return;
    const controller = new AbortController();
    // Deferred: the create request that emitted this event is still being answered.
    const done = sleep(0)
      .then(() => this.runJob(event.object, controller.signal))
      .finally(() => {
        this.running.delete(key);
        this.removeIfDeleting(event.object);
      });
    this.running.set(key, { cancel: () => controller.abort(), done });
  };

  /** The garbage collector's part of a foreground deletion: the pod has stopped, so the Job goes. */
  private removeIfDeleting(job: KubeObject): void {
    const current = this.ops.store.get(JOBS, job.metadata.namespace, job.metadata.name ?? '');
    if (
      current !== undefined &&
      current.metadata.uid === job.metadata.uid &&
      current.metadata.deletionTimestamp !== undefined
    )
      this.ops.store.delete(JOBS, job.metadata.namespace, job.metadata.name ?? '');
  }

  private setStatus(job: KubeObject, status: Record<string, unknown>): void {
    const current = this.ops.store.get(JOBS, job.metadata.namespace, job.metadata.name ?? '');
    // Deleted, or replaced by a new Job of the same name: nothing to report to.
    if (current === undefined || current.metadata.uid !== job.metadata.uid) return;
    this.ops.mergeStatus(JOBS, job.metadata.namespace, job.metadata.name ?? '', status);
  }

  private finish(
    job: KubeObject,
    type: 'Complete' | 'Failed',
    fields: Record<string, unknown>,
    reason?: string,
    message?: string,
  ): void {
    const condition = {
      type,
      status: 'True',
      lastProbeTime: now(),
      lastTransitionTime: now(),
      ...(reason ? { reason, message } : {}),
    };
    this.setStatus(job, { active: 0, ready: 0, ...fields, conditions: [condition] });
  }

  private async runJob(job: KubeObject, cancelled: AbortSignal): Promise<void> {
    const spec = rec(job.spec);
    const deadlineSeconds =
      typeof spec.activeDeadlineSeconds === 'number' ? spec.activeDeadlineSeconds : undefined;
    const signal =
      deadlineSeconds === undefined
        ? cancelled
        : AbortSignal.any([cancelled, AbortSignal.timeout(deadlineSeconds * 1000)]);
    const backoffLimit = typeof spec.backoffLimit === 'number' ? spec.backoffLimit : 6;
    this.setStatus(job, { startTime: now(), active: 1 });
    let failed = 0;
    for (let attempt = 1; ; attempt++) {
      const run = await this.runPod(job, attempt, signal);
      if (cancelled.aborted || this.stopped) return;
      if (run === undefined || signal.aborted) {
        this.finish(
          job,
          'Failed',
          { failed: failed + 1 },
          'DeadlineExceeded',
          'Job was active longer than specified deadline',
        );
        return;
      }
      if (run.code === 0) {
        this.finish(job, 'Complete', { succeeded: 1, completionTime: now() });
        return;
      }
      const container = str(list(rec(rec(spec.template).spec).containers)[0]?.name);
      const rule = matchingRule(spec.podFailurePolicy, container, run.code);
      if (rule?.action === 'FailJob') {
        const message = `Container ${container} for pod ${job.metadata.namespace ?? ''}/${run.pod} failed with exit code ${run.code ?? 'none'} matching FailJob rule at index ${rule.index}`;
        this.finish(job, 'Failed', { failed: failed + 1 }, 'PodFailurePolicy', message);
        return;
      }
      if (rule?.action !== 'Ignore') failed++;
      if (failed > backoffLimit) {
        const message = `Job has reached the specified backoff limit (last pod exited with ${run.code === null ? `signal ${run.signal ?? 'unknown'}` : `code ${run.code}`})`;
        this.finish(job, 'Failed', { failed }, 'BackoffLimitExceeded', message);
        return;
      }
      this.setStatus(job, { failed, active: 1, ready: 0 });
    }
  }

  /** One pod: wait for its Secrets, run the command; undefined when stopped before it ran. */
  private async runPod(
    job: KubeObject,
    attempt: number,
    signal: AbortSignal,
  ): Promise<(PodOutcome & { pod: string }) | undefined> {
    const namespace = job.metadata.namespace ?? 'default';
    const pod = `${job.metadata.name ?? ''}-${randomBytes(3).toString('hex').slice(0, 5)}`;
    const podSpec = rec(rec(rec(job.spec).template).spec);
    const container = list(podSpec.containers)[0] ?? {};
    const podDir = join(this.dir, `${namespace}.${pod}.${attempt}`);
    const volumes = await this.emptyDirs(podSpec, container, podDir);
    // The termination message file (the kubelet mounts one per container): a host file here, env values naming it rewritten.
    const terminationPath = str(container.terminationMessagePath);
    const terminationFile = join(podDir, 'termination-log');
    const env = await this.resolveEnv(
      namespace,
      container,
      terminationPath === '' ? volumes : { ...volumes, [terminationPath]: terminationFile },
      signal,
    );
    if (env === undefined) return undefined;
    const [, ...commandArgs] = strings(container.command);
    const [exe = '', ...exeArgs] = this.options.command;
    const args = [...exeArgs, ...commandArgs, ...strings(container.args)];
    const podLabels = rec(rec(rec(rec(job.spec).template).metadata).labels);
    const injected = (this.options.webhooks ?? [])
      .filter((w) => Object.entries(w.podLabels).every(([k, v]) => podLabels[k] === v))
      .map((w) => w.env);
    const webhookEnv: Record<string, string> = Object.assign({}, ...injected) as Record<string, string>;
    const kubeconfig = await this.kubeconfigOf(namespace, str(podSpec.serviceAccountName) || 'default');
    const childEnv = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      HOSTNAME: pod,
      KUBECONFIG: kubeconfig,
      ...this.options.env,
      ...webhookEnv,
      ...env,
      ...LOOPBACK_ENV,
    };
    const cwd = this.options.cwd ?? podDir;
    await mkdir(cwd, { recursive: true });
    // No readiness probes: a running container counts as ready.
    this.setStatus(job, { ready: 1 });
    const outcome = await runChild(exe, args, { cwd, env: childEnv }, signal);
    const run: JobRun = {
      namespace,
      job: job.metadata.name ?? '',
      pod,
      exitCode: outcome.code,
      signal: outcome.signal,
      stdout: outcome.stdout,
      stderr: outcome.stderr,
      volumes,
    };
    this.finished.push(run);
    this.options.onRun?.(run);
    const message = terminationPath === '' ? '' : await readFile(terminationFile, 'utf8').catch(() => '');
    this.recordPod(job, pod, str(container.name), outcome.code, message.slice(0, TERMINATION_MESSAGE_MAX));
    return { code: outcome.code, signal: outcome.signal, pod };
  }

  /**
   * The finished pod as the Job controller and kubelet leave it: labelled `controller-uid` and
   * `job-name` (both spellings), owned by the Job, phase Succeeded/Failed, the container terminated
   * with its exit code and termination message.
   */
  private recordPod(
    job: KubeObject,
    name: string,
    container: string,
    code: number | null,
    message: string,
  ): void {
    const namespace = job.metadata.namespace ?? 'default';
    const uid = job.metadata.uid ?? '';
    const jobName = job.metadata.name ?? '';
    const templateLabels = rec(rec(rec(job.spec).template).metadata).labels;
    const labels = {
      ...rec(templateLabels),
      'controller-uid': uid,
      'batch.kubernetes.io/controller-uid': uid,
      'job-name': jobName,
      'batch.kubernetes.io/job-name': jobName,
    };
    try {
      this.ops.create(PODS, namespace, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          name,
          namespace,
          labels,
          ownerReferences: [
            {
              apiVersion: 'batch/v1',
              kind: 'Job',
              name: jobName,
              uid,
              controller: true,
              blockOwnerDeletion: true,
            },
          ],
        },
        spec: { restartPolicy: 'Never', containers: [{ name: container }] },
      });
      const terminated = {
        exitCode: code ?? 137,
        reason: code === 0 ? 'Completed' : 'Error',
        finishedAt: now(),
        ...(message === '' ? {} : { message }),
      };
      this.ops.mergeStatus(PODS, namespace, name, {
        phase: code === 0 ? 'Succeeded' : 'Failed',
        containerStatuses: [{ name: container, state: { terminated } }],
      });
    } catch {
      // The namespace is gone: there is no pod to record.
    }
  }

  private async emptyDirs(
    podSpec: Record<string, unknown>,
    container: Record<string, unknown>,
    podDir: string,
  ): Promise<Record<string, string>> {
    const emptyDirs = new Set(
      list(podSpec.volumes)
        .filter((v) => isRecord(v.emptyDir))
        .map((v) => str(v.name)),
    );
    const out: Record<string, string> = {};
    for (const mount of list(container.volumeMounts)) {
      if (!emptyDirs.has(str(mount.name))) continue;
      const hostDir = join(podDir, 'volumes', str(mount.name));
      await mkdir(hostDir, { recursive: true });
      out[str(mount.mountPath)] = hostDir;
    }
    return out;
  }

  /** True for a path under one of `persistentPaths`. */
  private persistent(value: string): boolean {
    return (this.options.persistentPaths ?? []).some((p) => value === p || value.startsWith(`${p}/`));
  }

  /** The container's env, Secret references resolved; waits while a referenced Secret or key is missing. */
  private async resolveEnv(
    namespace: string,
    container: Record<string, unknown>,
    volumes: Record<string, string>,
    signal: AbortSignal,
  ): Promise<Record<string, string> | undefined> {
    for (;;) {
      const env: Record<string, string> = {};
      let missing = false;
      for (const entry of list(container.env)) {
        const name = str(entry.name);
        if (typeof entry.value === 'string')
          env[name] = this.persistent(entry.value) ? entry.value : rewritePath(entry.value, volumes);
        const ref = rec(rec(entry.valueFrom).secretKeyRef);
        if (typeof ref.name !== 'string') continue;
        const data = rec(this.ops.store.get(SECRETS, namespace, ref.name)?.data);
        const value = data[str(ref.key)];
        if (typeof value === 'string') env[name] = Buffer.from(value, 'base64').toString('utf8');
        else if (ref.optional !== true) missing = true;
      }
      if (!missing) return env;
      try {
        await sleep(this.options.pollMs ?? 20, undefined, { signal });
      } catch {
        return undefined;
      }
    }
  }
}

/** `value` with a leading emptyDir mount path replaced by its host directory (longest mount first). */
function rewritePath(value: string, volumes: Record<string, string>): string {
  const mount = Object.keys(volumes)
    .filter((m) => value === m || value.startsWith(`${m}/`))
    .sort((a, b) => b.length - a.length)[0];
  return mount === undefined ? value : `${volumes[mount] ?? ''}${value.slice(mount.length)}`;
}

/** The first podFailurePolicy rule whose onExitCodes matches, with its index. */
function matchingRule(
  policy: unknown,
  container: string,
  code: number | null,
): { action: string; index: number } | undefined {
  if (code === null || code === 0) return undefined;
  const rules = list(rec(policy).rules);
  for (const [index, rule] of rules.entries()) {
    const req = rec(rule.onExitCodes);
    if (req.operator === undefined) continue;
    if (typeof req.containerName === 'string' && req.containerName !== container) continue;
    const listed = (Array.isArray(req.values) ? req.values : []).includes(code);
    if ((req.operator === 'In') === listed) return { action: str(rule.action), index };
  }
  return undefined;
}

function runChild(
  exe: string,
  args: string[],
  opts: { cwd: string; env: NodeJS.ProcessEnv },
  signal: AbortSignal,
): Promise<PodOutcome & { stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(exe, args, { ...opts, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    // Like the kubelet: SIGTERM, then SIGKILL after a grace period.
    const kill = (): void => {
      child.kill('SIGTERM');
      setTimeout(() => child.kill('SIGKILL'), KILL_GRACE_MS).unref();
    };
    signal.addEventListener('abort', kill, { once: true });
    child.on('error', (err) => {
      signal.removeEventListener('abort', kill);
      resolve({ code: 127, signal: null, stdout, stderr: `${stderr}${err.message}\n` });
    });
    child.on('close', (code, sig) => {
      signal.removeEventListener('abort', kill);
      resolve({ code, signal: sig, stdout, stderr });
    });
  });
}
