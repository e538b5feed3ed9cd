import type { Role } from './identity';
import type { GeneralSettings } from './settings';

export type ChargesSettings = GeneralSettings['charges'];

/**
 * May a caller of `role` see cost figures (spec: Charges Settings)? The one rule every response
 * that carries a cost applies (the AI dashboard, the connection test, pipelines). With the group
 * disabled nothing is hidden; enabled, `only_admins_can_see` leaves costs to admins, and the two
 * `hide_for_*` flags hide them from their role. Admins always see them.
 */
export function maySeeCosts(role: Role, charges: ChargesSettings): boolean {
  if (!charges.ENABLED || role === 'admin') return true;
  if (charges.only_admins_can_see) return false;
  switch (role) {
    case 'service_owner':
      return !charges.hide_for_serviceowners;
    case 'consumer':
      return !charges.hide_for_consumers;
  }
}

/**
 * The currency code a response names beside its costs (spec: "Displayed currency is set by the
 * Currency general setting"): the chosen code while the Currency group is ENABLED; null while it
 * is disabled, so the same amounts are shown as plain numbers with no currency named. Costs
 * themselves are still shown or hidden by the Charges Settings (maySeeCosts) alone.
 */
export function shownCurrency(currency: GeneralSettings['currency']): string | null {
  return currency.ENABLED ? currency.currency : null;
}
