// Schema checks of rendered manifests (the Kustomize overlays, the Helm chart): kubernetes-models for
// types and required fields, @kubernetes/client-node's models for unknown fields.
import * as k8s from '@kubernetes/client-node';
import {
  ValidatingAdmissionPolicy,
  ValidatingAdmissionPolicyBinding,
} from 'kubernetes-models/admissionregistration.k8s.io/v1';
import { Deployment } from 'kubernetes-models/apps/v1';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import {
  ClusterRole,
  ClusterRoleBinding,
  Role,
  RoleBinding,
} from 'kubernetes-models/rbac.authorization.k8s.io/v1';
import { ConfigMap, Service, ServiceAccount } from 'kubernetes-models/v1';

/** A kubernetes-models class: `validate()` throws on a schema error. */
export type SchemaModel = new (data: never) => { validate(): void };

/** `apiVersion/kind` → [kubernetes-models class, @kubernetes/client-node model for {@link unknownFields}]. */
export const MODELS: Record<string, [SchemaModel, string]> = {
  'v1/ServiceAccount': [ServiceAccount, 'V1ServiceAccount'],
  'v1/ConfigMap': [ConfigMap, 'V1ConfigMap'],
  'v1/Service': [Service, 'V1Service'],
  'apps/v1/Deployment': [Deployment, 'V1Deployment'],
  'policy/v1/PodDisruptionBudget': [PodDisruptionBudget, 'V1PodDisruptionBudget'],
  'rbac.authorization.k8s.io/v1/Role': [Role, 'V1Role'],
  'rbac.authorization.k8s.io/v1/RoleBinding': [RoleBinding, 'V1RoleBinding'],
  'rbac.authorization.k8s.io/v1/ClusterRole': [ClusterRole, 'V1ClusterRole'],
  'rbac.authorization.k8s.io/v1/ClusterRoleBinding': [ClusterRoleBinding, 'V1ClusterRoleBinding'],
  'admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy': [
    ValidatingAdmissionPolicy,
    'V1ValidatingAdmissionPolicy',
  ],
  'admissionregistration.k8s.io/v1/ValidatingAdmissionPolicyBinding': [
    ValidatingAdmissionPolicyBinding,
    'V1ValidatingAdmissionPolicyBinding',
  ],
  'networking.k8s.io/v1/NetworkPolicy': [NetworkPolicy, 'V1NetworkPolicy'],
};

/**
 * Field paths of `value` that the @kubernetes/client-node model `type` (e.g. `V1Deployment`) does not
 * know: what `kubectl --validate=strict` refuses. kubernetes-models checks types, not unknown fields.
 */
export function unknownFields(value: unknown, type: string, path: string): string[] {
  if (value === null || value === undefined) return [];
  const array = /^Array<(.+)>$/.exec(type);
  if (array)
    return Array.isArray(value)
      ? value.flatMap((v: unknown, i) => unknownFields(v, array[1] ?? '', `${path}[${i}]`))
      : [];
  const map = /^\{ \[key: string\]: (.+); \}$/.exec(type);
  if (map) return Object.entries(value).flatMap(([k, v]) => unknownFields(v, map[1] ?? '', `${path}.${k}`));
  const model = (
    k8s as unknown as Record<
      string,
      { getAttributeTypeMap?: () => Array<{ baseName: string; type: string }> }
    >
  )[type];
  if (typeof model?.getAttributeTypeMap !== 'function' || typeof value !== 'object') return [];
  const attributes = new Map(model.getAttributeTypeMap().map((a) => [a.baseName, a.type]));
  return Object.entries(value).flatMap(([key, v]) => {
    const attr = attributes.get(key);
    return attr === undefined ? [`${path}.${key}`] : unknownFields(v, attr, `${path}.${key}`);
  });
}
