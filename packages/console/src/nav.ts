/** What each role finds in the navigation (docs/decisions/0030). */
import type { Role, Settings } from './api/types';
import { CONSOLE_PAGES, type ConsolePage } from './routes';

const BY_ROLE: Record<Role, readonly ConsolePage[]> = {
  admin: ['dashboard', 'models', 'processors', 'pipelines', 'change-instances', 'webhooks', 'settings'],
  service_owner: ['dashboard', 'models', 'processors', 'pipelines', 'change-instances', 'webhooks'],
  consumer: ['change-instances'],
};

/** The pages a role may open; the dashboard only while `show_ai_integration` is true. */
export function pagesFor(role: Role, settings: Settings | null): ConsolePage[] {
  const aiShown = settings?.ai_integration.show_ai_integration === true;
  return BY_ROLE[role].filter((page) => page !== 'dashboard' || aiShown);
}

export const pageTitle = (page: ConsolePage) => CONSOLE_PAGES[page];

/** Where a role lands after signing in. */
export function homeFor(role: Role, settings: Settings | null): string {
  return `/${pagesFor(role, settings)[0] ?? 'change-instances'}`;
}
