/**
 * The exact `gcloud` commands preflight prints as fixes, built in one place so the Workload Identity
 * guide and the checks say the same thing. Values are validated before they get here (project ids,
 * service account emails), so only the Workload Identity member, which holds brackets, needs quotes.
 */

/** The Kubernetes service account the adapter (and its Jobs) run as, for Workload Identity. */
export interface KubernetesServiceAccount {
  namespace: string;
  name: string;
}

/** Enables the Secret Manager API in the project. */
export function enableApiCommand(project: string): string {
  return `gcloud services enable secretmanager.googleapis.com --project=${project}`;
}

/** Grants `role` on the project to the Google service account. */
export function grantRoleCommand(project: string, serviceAccount: string, role: string): string {
  return `gcloud projects add-iam-policy-binding ${project} --member=serviceAccount:${serviceAccount} --role=${role}`;
}

/**
 * Lets the Kubernetes service account act as the Google service account (GKE Workload Identity).
 * `workloadPool` is `CLUSTER_PROJECT.svc.id.goog` of the cluster the adapter runs in.
 */
export function workloadIdentityBindingCommand(
  serviceAccount: string,
  workloadPool: string,
  ksa: KubernetesServiceAccount,
): string {
  return (
    `gcloud iam service-accounts add-iam-policy-binding ${serviceAccount} --role=roles/iam.workloadIdentityUser ` +
    `--member="serviceAccount:${workloadPool}[${ksa.namespace}/${ksa.name}]"`
  );
}

/** Application Default Credentials for a person at a workstation. */
export function adcLoginCommand(serviceAccount?: string): string {
  return serviceAccount === undefined
    ? 'gcloud auth application-default login'
    : `gcloud auth application-default login --impersonate-service-account=${serviceAccount}`;
}

/** Lists the project roles bound to the service account (to check the grants by hand). */
export function listBindingsCommand(project: string, serviceAccount: string): string {
  return (
    `gcloud projects get-iam-policy ${project} --flatten="bindings[].members" ` +
    `--filter="bindings.members:serviceAccount:${serviceAccount}" --format="value(bindings.role)"`
  );
}
