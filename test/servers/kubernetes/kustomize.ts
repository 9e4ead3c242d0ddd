import { readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseAllDocuments, parse as parseYaml } from 'yaml';
import { isRecord, type KubeObject } from './types.js';

/**
 * A small `kustomize build` for the deployment's manifests (`deploy/`), so the test server can load the
 * RBAC the project ships without a kustomize binary. It does what those kustomizations use, and
 * refuses anything else rather than render it wrongly: `resources` (files and directories),
 * `components`, `namespace` (namespaced kinds only), `labels` (metadata only) and inline JSON 6902
 * `patches` with a kind/name target. Generators and image tags are skipped: they make no RBAC.
 * Semantics: https://kubectl.docs.kubernetes.io/references/kustomize/kustomization/ (the
 * `test/deploy/kubernetes-rbac.test.ts` cross-check compares the RBAC with `kubectl kustomize` when present).
 */

/** Kinds with no namespace, which the `namespace` field leaves alone (kustomize knows their scope). */
const CLUSTER_SCOPED = new Set([
  'Namespace',
  'ClusterRole',
  'ClusterRoleBinding',
  'CustomResourceDefinition',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionPolicyBinding',
]);
const KNOWN_FIELDS = new Set([
  'apiVersion',
  'kind',
  'namespace',
  'labels',
  'resources',
  'components',
  'patches',
  'configMapGenerator',
  'images',
]);

interface PatchOp {
  op: 'add' | 'replace' | 'remove';
  path: string;
  value?: unknown;
}

function readKustomization(dir: string): Record<string, unknown> {
  const doc: unknown = parseYaml(readFileSync(join(dir, 'kustomization.yaml'), 'utf8'));
  if (!isRecord(doc)) throw new Error(`${dir}/kustomization.yaml is not a mapping`);
  const unknown = Object.keys(doc).filter((k) => !KNOWN_FIELDS.has(k));
  if (unknown.length > 0)
    throw new Error(`${dir}/kustomization.yaml: the test renderer does not support ${unknown.join(', ')}`);
  return doc;
}

function readResources(path: string): KubeObject[] {
  if (statSync(path).isDirectory()) return render(path);
  return parseAllDocuments(readFileSync(path, 'utf8'))
    .map((d) => d.toJS() as unknown)
    .filter(isRecord) as KubeObject[];
}

const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

/** Applies one JSON 6902 operation (paths of keys and array indexes, `-` to append). */
function applyOp(target: KubeObject, op: PatchOp): void {
  const keys = op.path
    .split('/')
    .slice(1)
    .map((k) => k.replaceAll('~1', '/').replaceAll('~0', '~'));
  const last = keys.pop();
  let node: unknown = target;
  for (const key of keys)
    node = Array.isArray(node) ? node[Number(key)] : isRecord(node) ? node[key] : undefined;
  if (last === undefined || (!isRecord(node) && !Array.isArray(node)))
    throw new Error(`patch path ${op.path} not found`);
  if (Array.isArray(node)) {
    const index = last === '-' ? node.length : Number(last);
    if (op.op === 'remove') node.splice(index, 1);
    else node.splice(index, op.op === 'replace' ? 1 : 0, op.value);
  } else if (op.op === 'remove') delete node[last];
  else node[last] = op.value;
}

function applyPatches(objects: KubeObject[], patches: unknown[], dir: string): void {
  for (const entry of patches) {
    if (!isRecord(entry) || !isRecord(entry.target) || typeof entry.patch !== 'string')
      throw new Error(`${dir}: only inline patches with a target are supported`);
    const { kind, name } = entry.target;
    const ops = parseYaml(entry.patch) as PatchOp[];
    if (!Array.isArray(ops)) throw new Error(`${dir}: only JSON 6902 patches are supported`);
    for (const obj of objects.filter(
      (o) => o.kind === kind && (name === undefined || o.metadata.name === name),
    ))
      for (const op of ops) applyOp(obj, op);
  }
}

/** Renders the kustomization (or component) in `dir`, like `kubectl kustomize dir`. @throws on unsupported fields. */
export function render(dir: string): KubeObject[] {
  const k = readKustomization(dir);
  const objects = list(k.resources).flatMap((r) => readResources(resolve(dir, String(r))));
  for (const component of list(k.components)) {
    const c = readKustomization(resolve(dir, String(component)));
    objects.push(
      ...list(c.resources).flatMap((r) => readResources(resolve(dir, String(component), String(r)))),
    );
    applyPatches(objects, list(c.patches), String(component));
  }
  if (typeof k.namespace === 'string')
    for (const obj of objects) if (!CLUSTER_SCOPED.has(obj.kind)) obj.metadata.namespace = k.namespace;
  for (const set of list(k.labels)) {
    const pairs = isRecord(set) && isRecord(set.pairs) ? (set.pairs as Record<string, string>) : {};
    for (const obj of objects) obj.metadata.labels = { ...obj.metadata.labels, ...pairs };
  }
  applyPatches(objects, list(k.patches), dir);
  return objects;
}

const RBAC_KINDS = new Set(['ServiceAccount', 'Role', 'RoleBinding', 'ClusterRole', 'ClusterRoleBinding']);

/** The service accounts and RBAC objects of a rendered kustomization under the repository's `deploy/`. */
export function deployRbac(overlay: string): KubeObject[] {
  const dir = resolve(import.meta.dirname, '../../../deploy', overlay);
  return render(dir).filter((o) => RBAC_KINDS.has(o.kind));
}
