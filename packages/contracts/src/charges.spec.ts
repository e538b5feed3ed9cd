import { maySeeCosts, shownCurrency, type ChargesSettings } from './charges';
import type { Role } from './identity';

const off: ChargesSettings = {
  ENABLED: false,
  hide_for_serviceowners: false,
  hide_for_consumers: false,
  only_admins_can_see: false,
};
const on = (flags: Partial<ChargesSettings>): ChargesSettings => ({ ...off, ENABLED: true, ...flags });
const all = { hide_for_serviceowners: true, hide_for_consumers: true, only_admins_can_see: true };

describe('maySeeCosts', () => {
  // [settings, admin, service_owner, consumer]
  const table: [string, ChargesSettings, boolean, boolean, boolean][] = [
    ['disabled: nothing hidden', off, true, true, true],
    ['disabled with every flag set: nothing hidden', { ...off, ...all }, true, true, true],
    ['enabled, no flag', on({}), true, true, true],
    ['enabled, hide_for_serviceowners', on({ hide_for_serviceowners: true }), true, false, true],
    ['enabled, hide_for_consumers', on({ hide_for_consumers: true }), true, true, false],
    [
      'enabled, both hide flags',
      on({ hide_for_serviceowners: true, hide_for_consumers: true }),
      true,
      false,
      false,
    ],
    ['enabled, only_admins_can_see', on({ only_admins_can_see: true }), true, false, false],
    ['enabled, every flag', on(all), true, false, false],
  ];
  it.each(table)('%s', (_name, charges, admin, owner, consumer) => {
    const seen = (role: Role) => maySeeCosts(role, charges);
    expect([seen('admin'), seen('service_owner'), seen('consumer')]).toEqual([admin, owner, consumer]);
  });
});

describe('shownCurrency', () => {
  it('names the chosen currency while the Currency group is ENABLED, and none while it is disabled', () => {
    expect(shownCurrency({ ENABLED: true, currency: 'EUR' })).toBe('EUR');
    expect(shownCurrency({ ENABLED: false, currency: 'EUR' })).toBeNull();
  });
});
