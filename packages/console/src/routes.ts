/**
 * The console's pages by path (history routing). Shared with the gateway, which answers these
 * paths with the console's index.html (SPA fallback) and leaves every other path alone. Plain
 * data only: node and the browser both import it.
 */
export const CONSOLE_PAGES = {
  'sign-in': 'Sign in',
  dashboard: 'AI Integration',
  models: 'LLM models',
  processors: 'AI processors',
  pipelines: 'Pipelines',
  'change-instances': 'Change Instances',
  webhooks: 'Webhooks',
  settings: 'General settings',
} as const;

export type ConsolePage = keyof typeof CONSOLE_PAGES;

/** The page a path belongs to (`/models/12` -> models), or undefined for a path the console does not own. */
export function consolePageOf(pathname: string): ConsolePage | undefined {
  const first = pathname.split('/')[1] ?? '';
  return Object.hasOwn(CONSOLE_PAGES, first) ? (first as ConsolePage) : undefined;
}
