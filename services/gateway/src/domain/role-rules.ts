import { ROLES, type Role } from '@pack/contracts';

/**
 * Which role a directory or identity-provider account gets: the highest role any of its groups
 * grants (`SIGNIN_ROLE_GROUPS`, group name -> role, names compared case-insensitively), else the
 * default role, or none (the sign-in is refused).
 */
export interface RoleRules {
  groups: ReadonlyMap<string, Role>;
  defaultRole: Role | null;
}

/** Highest first. */
const RANK: readonly Role[] = ['admin', 'service_owner', 'consumer'];

/** `<group>=<role>` pairs, comma separated; the map, or what is wrong with the text. */
export function parseRoleGroups(text: string): Map<string, Role> | string {
  const groups = new Map<string, Role>();
  for (const pair of text
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)) {
    const [group, role, ...rest] = pair.split('=').map((part) => part.trim());
    if (!group || !role || rest.length > 0) return `"${pair}" is not <group>=<role>`;
    if (!(ROLES as readonly string[]).includes(role)) return `"${role}" is not a role (${ROLES.join(', ')})`;
    groups.set(group.toLowerCase(), role as Role);
  }
  return groups;
}

export function roleFor(memberOf: readonly string[], rules: RoleRules): Role | null {
  const granted = new Set(
    memberOf.map((group) => rules.groups.get(group.toLowerCase())).filter((role) => role !== undefined),
  );
  return RANK.find((role) => granted.has(role)) ?? rules.defaultRole;
}
