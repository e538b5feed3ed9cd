import { z } from 'zod';
import { consolePageOf } from '@pack/console';
import { AppError } from '@pack/errors';
import type { Reply } from '@pack/http-kit';

const isConsolePage = (path: string) =>
  path === '/' ||
  (path.startsWith('/') &&
    !path.startsWith('//') &&
    !path.includes('\\') &&
    consolePageOf(path) !== undefined);

/** Only a console page of this origin: never an address someone put in a link. */
export const returnToSchema = z
  .string()
  .max(2048)
  .refine(isConsolePage, 'must be / or a console page path such as /dashboard')
  .describe(
    "The console's home (/) or one of its pages (such as /dashboard) to land on, signed in: the callback then redirects to the console's sign-in page with the token in the URL's fragment, and a refusal redirects there too. Without it the callback answers the token as JSON",
  );

/**
 * The browser back at the console's sign-in page, which reads the fragment: the token (the
 * fragment is never sent to a server nor in a Referer) or the refusal's detail, and the page to go on to.
 */
export function toConsole(returnTo: string, fragment: Record<string, string>, headers = {}): Reply {
  const hash = new URLSearchParams({ ...fragment, next: returnTo });
  return { status: 302, headers: { ...headers, location: `/sign-in#${hash.toString()}` } };
}

/** `run`'s answer; for a sign-in the console started, a refusal goes back to the console. */
export async function orToConsole(
  returnTo: string | undefined,
  run: () => Promise<Reply>,
  headers: Record<string, string> = {},
): Promise<Reply> {
  try {
    return await run();
  } catch (error) {
    if (!returnTo || !(error instanceof AppError)) throw error;
    return toConsole(returnTo, { error: error.detail }, headers);
  }
}
