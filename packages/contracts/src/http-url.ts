import { storedText } from './text';

/** http(s) only, and no user:password in the URL (a credential there would leak into logs). */
export function isPlainHttpUrl(value: string): boolean {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  return (url.protocol === 'http:' || url.protocol === 'https:') && !url.username && !url.password;
}

const PLAIN_HTTP_URL_MESSAGE =
  'must be an http(s) URL without credentials, spaces or control characters, whose host is a name, an IPv4 or a bracketed IPv6 address';

// A host name: labels of ASCII letters, digits, '-' and '_' joined by single dots; the last label
// is not a number (0x1f or 300 would make the WHATWG parser read the host as an IPv4 address).
const LABEL = '[A-Za-z0-9_-]+';
const LAST_LABEL = '(?![0-9]+$|[0-9]+[.:/?#]|0[xX][0-9A-Fa-f]*(?:$|[.:/?#]))[A-Za-z0-9_-]+';
const NAME = `(?:${LABEL}\\.)*${LAST_LABEL}`;
const OCTET = '(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])';
const IPV4 = `${OCTET}(?:\\.${OCTET}){3}`;
const H16 = '[0-9A-Fa-f]{1,4}';
const LS32 = `(?:${H16}:${H16}|${IPV4})`;
// RFC 3986 section 3.2.2's IPv6address, without zone ids (the WHATWG parser has none).
const IPV6 = [
  `(?:${H16}:){6}${LS32}`,
  `::(?:${H16}:){5}${LS32}`,
  `(?:${H16})?::(?:${H16}:){4}${LS32}`,
  `(?:(?:${H16}:){0,1}${H16})?::(?:${H16}:){3}${LS32}`,
  `(?:(?:${H16}:){0,2}${H16})?::(?:${H16}:){2}${LS32}`,
  `(?:(?:${H16}:){0,3}${H16})?::${H16}:${LS32}`,
  `(?:(?:${H16}:){0,4}${H16})?::${LS32}`,
  `(?:(?:${H16}:){0,5}${H16})?::${H16}`,
  `(?:(?:${H16}:){0,6}${H16})?::`,
].join('|');
const PORT = '0*(?:6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[0-9]{1,4})?';
/** What follows the host: no space, no control character (the WHATWG parser drops or encodes them). */
const REST = '(?:[/?#][^\\u0000-\\u0020\\u007f]*)?';
/**
 * An http(s) URL the WHATWG parser reads as written: scheme in any case, no user:password, a
 * host name (ASCII), an IPv4 address or a bracketed IPv6 address, an optional port up to 65535,
 * and no space or control character anywhere. A pattern, so the OpenAPI document states exactly
 * what the server takes (the server checks the same expression, and that the URL parses).
 */
export const HTTP_URL_PATTERN = `[Hh][Tt][Tt][Pp][Ss]?://(?:${IPV4}|${NAME}|\\[(?:${IPV6})\\])(?::${PORT})?${REST}`;

/**
 * An http(s) URL as a stored field (HTTP_URL_PATTERN), which must also parse (WHATWG). The
 * address guard checks the host where the URL is used (PACK_ALLOWED_TARGET_CIDRS). With
 * `trimmed`, surrounding white space is allowed and removed before the checks.
 */
export function plainHttpUrl(description: string, { trimmed = false } = {}) {
  const text = trimmed ? storedText().trim() : storedText();
  const pattern = new RegExp(trimmed ? `^\\s*${HTTP_URL_PATTERN}\\s*$` : `^${HTTP_URL_PATTERN}$`);
  return (
    text
      .max(2048)
      .regex(pattern, PLAIN_HTTP_URL_MESSAGE)
      // Only once the pattern holds, so a refusal says it once (and no check aborts a union branch).
      .refine((value) => !pattern.test(value) || isPlainHttpUrl(value), PLAIN_HTTP_URL_MESSAGE)
      .describe(`${description}: a URL that parses, without user or password in it`)
  );
}
