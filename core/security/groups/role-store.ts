import type { Permission } from '../permissions/permission-set.js';
import { GroupStore, type GroupInput, type GroupRow } from './group-store.js';
import { parseJson } from './input.js';

export interface RoleInput extends GroupInput {
  permissions: Permission[];
}

/** security_roles: a named set of permissions its members hold (read by the principal resolver). */
export class RoleStore extends GroupStore<RoleInput> {
  readonly kind = 'role' as const;
  readonly codes = { invalid: 'SEC-ROLE-002', notFound: 'SEC-ROLE-003', exists: 'SEC-ROLE-004' } as const;
  protected readonly table = 'security_roles';

  protected columns(input: RoleInput): Record<string, unknown> {
    return { permissions: JSON.stringify(input.permissions) };
  }

  protected fields(row: GroupRow): Pick<RoleInput, 'permissions'> {
    return { permissions: parseJson<Permission[]>(row.permissions as string, []) };
  }
}
