/**
 * A Retry-After header as seconds from `now`: a number of seconds (a fraction is kept) or an HTTP
 * date (a past date is 0); null when absent or unreadable.
 */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | null {
  if (typeof value !== 'string' || value.trim() === '') return null;
  const text = value.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Number(text);
  // An HTTP date names its month; a bare '-5' or '1.5.3' is no date, whatever Date.parse makes of it.
  const date = /[a-z]/i.test(text) ? Date.parse(text) : NaN;
  return Number.isNaN(date) ? null : Math.max(0, Math.ceil((date - now) / 1000));
}
