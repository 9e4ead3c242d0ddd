import { clone, isRecord, type KubeObject } from './types.js';

/**
 * Defaulting the API server applies to every create and update body before validation (so a
 * client that omits a defaulted field does not "change" it), for the kinds the server serves.
 */

function record(parent: Record<string, unknown>, key: string): Record<string, unknown> {
  const value = parent[key];
  if (isRecord(value)) return value;
  const created: Record<string, unknown> = {};
  parent[key] = created;
  return created;
}

function defaultPodSpec(podSpec: Record<string, unknown>): void {
  podSpec.restartPolicy ??= 'Always';
  podSpec.dnsPolicy ??= 'ClusterFirst';
  podSpec.schedulerName ??= 'default-scheduler';
  podSpec.terminationGracePeriodSeconds ??= 30;
  podSpec.securityContext ??= {};
  const containers = Array.isArray(podSpec.containers) ? (podSpec.containers as unknown[]) : [];
  for (const c of containers) {
    if (!isRecord(c)) continue;
    const image = typeof c.image === 'string' ? c.image : '';
    const tagged = /:[^/]+$/.test(image) && !image.endsWith(':latest');
    c.imagePullPolicy ??= tagged || image.includes('@') ? 'IfNotPresent' : 'Always';
    c.terminationMessagePath ??= '/dev/termination-log';
    c.terminationMessagePolicy ??= 'File';
    c.resources ??= {};
  }
}

/** Applies defaults in place and returns the object. */
export function applyDefaults(obj: KubeObject): KubeObject {
  if (obj.kind === 'Secret') {
    obj.type ??= 'Opaque';
    if (isRecord(obj.stringData)) {
      // stringData is write-only: merged into data, never stored or served.
      const data = record(obj, 'data');
      for (const [k, v] of Object.entries(obj.stringData))
        data[k] = Buffer.from(String(v), 'utf8').toString('base64');
    }
    delete obj.stringData;
  }
  if (obj.kind === 'Namespace') {
    const labels = (obj.metadata.labels ??= {});
    labels['kubernetes.io/metadata.name'] = obj.metadata.name ?? '';
    const spec = record(obj, 'spec');
    spec.finalizers ??= ['kubernetes'];
  }
  if (obj.kind === 'Job') {
    const spec = record(obj, 'spec');
    spec.backoffLimit ??= 6;
    spec.completions ??= 1;
    spec.parallelism ??= 1;
    spec.completionMode ??= 'NonIndexed';
    spec.suspend ??= false;
    spec.podReplacementPolicy ??= 'TerminatingOrFailed';
    const template = record(spec, 'template');
    record(template, 'metadata');
    defaultPodSpec(record(template, 'spec'));
  }
  return obj;
}

/**
 * Create-only defaulting: the generated selector and pod-template labels of a Job (keyed by its
 * uid), and the initial status of kinds that have one.
 */
export function applyCreateDefaults(obj: KubeObject, uid: string): KubeObject {
  if (obj.kind === 'Namespace') obj.status = { phase: 'Active' };
  if (obj.kind === 'Job') {
    const spec = record(obj, 'spec');
    const name = obj.metadata.name ?? '';
    const generated = {
      'batch.kubernetes.io/controller-uid': uid,
      'batch.kubernetes.io/job-name': name,
      'controller-uid': uid,
      'job-name': name,
    };
    if (spec.manualSelector !== true)
      spec.selector = { matchLabels: { 'batch.kubernetes.io/controller-uid': uid } };
    const templateMeta = record(record(spec, 'template'), 'metadata');
    const templateLabels = {
      ...(isRecord(templateMeta.labels) ? (templateMeta.labels as Record<string, string>) : {}),
      ...generated,
    };
    templateMeta.labels = templateLabels;
    // Like the API server: a Job without labels takes its pod template's labels.
    if (Object.keys(obj.metadata.labels ?? {}).length === 0) obj.metadata.labels = { ...templateLabels };
    obj.status = {};
  }
  return clone(obj);
}
