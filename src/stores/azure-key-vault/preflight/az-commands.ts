/**
 * The exact `az` commands preflight prints as fixes (and docs/azure-identity.md shows), built in one
 * place. Placeholders in angle brackets stand for values preflight was not given.
 */

/** The role that holds every data-plane right the store needs (get, list, set, delete, recover). */
const SECRETS_ROLE = 'Key Vault Secrets Officer';

/** Grants the role on the vault (vaults using Azure RBAC, the default for new vaults). */
export function roleAssignmentCommand(assignee: string, vaultResourceId: string): string {
  return `az role assignment create --role "${SECRETS_ROLE}" --assignee ${assignee} --scope ${vaultResourceId}`;
}

/** The same rights through an access policy (vaults using the access policy model). */
export function accessPolicyCommand(vaultName: string, assignee: string): string {
  return (
    `az keyvault set-policy --name ${vaultName} --object-id ${assignee} --secret-permissions get ` +
    `list set delete recover`
  );
}

/** Lists the role assignments of the identity on the vault. */
export function listAssignmentsCommand(assignee: string, vaultResourceId: string): string {
  return (
    `az role assignment list --assignee ${assignee} --scope ${vaultResourceId} --query ` +
    `"[].roleDefinitionName" --output tsv`
  );
}

/** Signs a person in at a workstation. */
export function loginCommand(): string {
  return 'az login';
}
