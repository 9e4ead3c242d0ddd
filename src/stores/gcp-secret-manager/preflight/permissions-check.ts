import { grantRoleCommand, listBindingsCommand } from './gcloud-commands.js';
import { PERMISSION_ROLES, REQUIRED_PERMISSIONS, type RequiredPermission } from './permissions.js';
import type { CheckResult } from './types.js';

/** What the permission checks know after TestIamPermissions (and, for an empty answer, GetSecret). */
export interface PermissionEvidence {
  project: string;
  serviceAccount: string;
  /** The secret resource the permissions were tested on. */
  resource: string;
  /** Permissions TestIamPermissions granted. */
  granted: readonly string[];
  /**
   * For an empty answer: whether the tested secret exists. `missing` means GetSecret answered
   * NOT_FOUND (which itself proves `secrets.get`); `exists` or `denied` make the empty answer real.
   */
  probe?: 'missing' | 'exists' | 'denied';
}

function check(
  permission: RequiredPermission,
  status: CheckResult['status'],
  detail: string,
  fix: string[],
): CheckResult {
  return { id: `permission:${permission}`, title: `permission ${permission}`, status, detail, fix };
}

/**
 * One check per required permission, each failing one with the exact `gcloud` grant. An empty
 * answer on a secret that does not exist is ambiguous (Secret Manager answers that way whatever
 * the grants), so it gives warnings with the command that lists the bindings instead of failures;
 * `secrets.get` is still proven by GetSecret's NOT_FOUND (without it the answer is PERMISSION_DENIED).
 */
export function permissionChecks(evidence: PermissionEvidence): CheckResult[] {
  const granted = new Set(evidence.granted);
  const ambiguous = granted.size === 0 && evidence.probe === 'missing';
  return REQUIRED_PERMISSIONS.map((permission) => {
    const grant = grantRoleCommand(evidence.project, evidence.serviceAccount, PERMISSION_ROLES[permission]);
    if (granted.has(permission)) return check(permission, 'pass', `granted on ${evidence.resource}`, []);
    if (ambiguous && permission === 'secretmanager.secrets.get') {
      return check(
        permission,
        'pass',
        `granted: GetSecret on ${evidence.resource} answered NOT_FOUND, not PERMISSION_DENIED`,
        [],
      );
    }
    if (ambiguous) {
      return check(
        permission,
        'warn',
        `cannot be verified: ${evidence.resource} does not exist and Secret Manager then reports no permissions; ` +
          'check the project bindings, or run preflight with --secret naming an existing secret',
        [listBindingsCommand(evidence.project, evidence.serviceAccount), grant],
      );
    }
    return check(permission, 'fail', `not granted on ${evidence.resource}`, [grant]);
  });
}
