/**
 * The four IAM permissions every customer project must grant the adapter (the write intent and
 * retention need more: docs/workload-identity.md, docs/retention.md), with the smallest predefined role
 * holding each (the same roles the store's PERMISSION_DENIED advice names).
 */
export const REQUIRED_PERMISSIONS = [
  'secretmanager.secrets.create',
  'secretmanager.secrets.get',
  'secretmanager.versions.add',
  'secretmanager.versions.access',
] as const;

export type RequiredPermission = (typeof REQUIRED_PERMISSIONS)[number];

/** Permission → predefined role. Only `roles/secretmanager.admin` holds `secrets.create`. */
export const PERMISSION_ROLES: Readonly<Record<RequiredPermission, string>> = {
  'secretmanager.secrets.create': 'roles/secretmanager.admin',
  'secretmanager.secrets.get': 'roles/secretmanager.viewer',
  'secretmanager.versions.add': 'roles/secretmanager.secretVersionAdder',
  'secretmanager.versions.access': 'roles/secretmanager.secretAccessor',
};

/**
 * Secret id the permissions are tested on when no existing secret is named. No cluster secret can
 * carry it (those are `hyperfleet-{uuid}-pull-secret`) and preflight never creates it.
 */
export const PROBE_SECRET_ID = 'hyperfleet-preflight-probe';
