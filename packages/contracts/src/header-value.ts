import { z } from 'zod';
import { storedTextChecks } from './text';

/**
 * The checks of a value the platform sends as an HTTP header (a webhook's authorization): CR
 * and LF would start a new header line (undici refuses them, so every send would fail for
 * good), and NUL cannot be stored. Refused at write time, naming the field (case 7).
 * Beyond those, only what a header value may carry: tab, space, visible ASCII and Latin-1.
 */
const LINE_BREAK = /[\r\n]/;
const LINE_BREAK_OR_NUL = /[\r\n\u0000]/;
const NOT_A_HEADER_CHARACTER = /[^\t\u0020-\u007e\u0080-\u00ff]/;
/** The same rule as a pattern, for the OpenAPI document: it leaves CR, LF and NUL out too. */
const HEADER_TEXT = /^[\t\u0020-\u007e\u0080-\u00ff]*$/;

export const HEADER_LINE_BREAK_MESSAGE = 'must not contain CR, LF or NUL: it is sent as an HTTP header value';
export const HEADER_CHARACTER_MESSAGE =
  'must contain only what an HTTP header value can carry: tab, space, visible ASCII and Latin-1 letters';

export const headerValueChecks = () =>
  [
    ...storedTextChecks(),
    // NUL and lone surrogates have their messages from storedTextChecks: one message per fault.
    z.refine<string>((value) => !LINE_BREAK.test(value), HEADER_LINE_BREAK_MESSAGE),
    z.refine<string>(
      (value) =>
        LINE_BREAK_OR_NUL.test(value) || !value.isWellFormed() || !NOT_A_HEADER_CHARACTER.test(value),
      HEADER_CHARACTER_MESSAGE,
    ),
  ] as const;

/** A string sent as an HTTP header value and kept as a database string. */
export const headerValueText = () =>
  z
    .string()
    .check(...headerValueChecks())
    .meta({ pattern: HEADER_TEXT.source });
