/** What each role finds in the navigation (docs/decisions/0030). */
import type { Role, Settings } from './api/types';
import { CONSOLE_PAGES, type ConsolePage } from './routes';

const BY_ROLE: Record<Role, readonly ConsolePage[]> = {
  admin: ['dashboard', 'models', 'processors', 'pipelines', 'change-instances', 'webhooks', 'settings'],
  service_owner: ['dashboard', 'models', 'processors', 'pipelines', 'change-instances', 'webhooks'],
  consumer: ['change-instances'],
};

/**
 * Pages shown only while an AI feature is on (`show_ai_integration`, derived from the AI
 * switches `show_ai_processor` and `show_ai_validator`, both on by default): the dashboard, and
 * the AI processors page, which offers the stage processors, Pack Optimizer and Universal
 * Executor while `show_ai_processor` is on and the Change Instance Validator while
 * `show_ai_validator` is on. The switches are enforced by the orchestrator, not only here: off,
 * the validator decides nothing and no AI stage starts (docs/decisions/0040).
 */
export const AI_PAGES: readonly ConsolePage[] = ['dashboard', 'processors'];

/** The pages a role may open; the AI pages only while `show_ai_integration` is true. */
export function pagesFor(role: Role, settings: Settings | null): ConsolePage[] {
  const aiShown = settings?.ai_integration.show_ai_integration === true;
  return BY_ROLE[role].filter((page) => !AI_PAGES.includes(page) || aiShown);
}

/** Whether a role may open a page at all (whatever the settings turn off). */
export const roleHasPage = (role: Role, page: ConsolePage) => BY_ROLE[role].includes(page);

export const pageTitle = (page: ConsolePage) => CONSOLE_PAGES[page];

/** Where a role lands after signing in. */
export function homeFor(role: Role, settings: Settings | null): string {
  return `/${pagesFor(role, settings)[0] ?? 'change-instances'}`;
}
