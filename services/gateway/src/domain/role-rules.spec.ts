import { parseRoleGroups, roleFor, type RoleRules } from './role-rules';

const rules = (defaultRole: RoleRules['defaultRole']): RoleRules => ({
  groups: new Map([
    ['pack-admins', 'admin'],
    ['owners', 'service_owner'],
    ['users', 'consumer'],
  ]),
  defaultRole,
});

describe('role rules', () => {
  it('gives the highest role any group grants, whatever the case of the group name', () => {
    expect(roleFor(['users', 'Pack-Admins'], rules('consumer'))).toBe('admin');
    expect(roleFor(['users', 'owners'], rules(null))).toBe('service_owner');
    expect(roleFor(['USERS'], rules(null))).toBe('consumer');
  });

  it('falls back to the default role, or refuses when there is none', () => {
    expect(roleFor(['other'], rules('consumer'))).toBe('consumer');
    expect(roleFor([], rules(null))).toBeNull();
  });

  it('reads <group>=<role> pairs and names what is wrong', () => {
    expect(parseRoleGroups('admins=admin, Owners = service_owner')).toEqual(
      new Map([
        ['admins', 'admin'],
        ['owners', 'service_owner'],
      ]),
    );
    expect(parseRoleGroups('admins=root')).toBe('"root" is not a role (admin, service_owner, consumer)');
    expect(parseRoleGroups('admins')).toBe('"admins" is not <group>=<role>');
  });
});
