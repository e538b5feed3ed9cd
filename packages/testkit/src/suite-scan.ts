import { randomInt } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { FragmentIndex, LEAK_FRAGMENT_LENGTH, type Fragment } from './fragment-index';
import { currentTest, recordForScan, type ResponseRecord, type SeededRecord } from './scan-record';

export * from './scan-record';

/** Seeds `secret` (existing material, at least 6 characters) for the suite-wide scan. */
export function seedSecret(label: string, secret: string): string {
  if (secret.length < LEAK_FRAGMENT_LENGTH)
    throw new Error(`secret ${label} is shorter than ${LEAK_FRAGMENT_LENGTH} characters`);
  recordForScan('secrets', { label, secret, file: currentTest().file } satisfies SeededRecord);
  return secret;
}

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const DIGITS = '0123456789';

/**
 * A new random secret for a test, `<prefix><random><suffix>`, seeded for the suite-wide scan
 * (the random part and the suffix: a prefix like `sk-` or `Bearer ` is public, and a suffix of 4
 * is what masks show, `********1111`, too short to count alone). Every 6 characters of it hold
 * at least two that are not hex digits in any case, so ids, hashes and uuids in logs never look
 * like a fragment of it, nor ids that join hex and decimal with one letter (a resend's message
 * id, `…<recovery id>x<seq>`, once matched a key's 6 characters: a hex digit, `x`, four digits).
 */
export function seededSecret(
  label: string,
  options: { prefix?: string; suffix?: string; length?: number } = {},
): string {
  const { prefix = '', suffix = '', length = 20 } = options;
  if (suffix.length >= LEAK_FRAGMENT_LENGTH)
    throw new Error(
      `the suffix of ${label} is no secret and would be looked for: keep it under ${LEAK_FRAGMENT_LENGTH}`,
    );
  let material: string;
  do {
    // Before a suffix with letters, a digit: every window that holds suffix letters then holds a
    // digit too, so none reads as a word (`...inTEXT` was found in "plaintext settings read").
    const last = /[a-z]/i.test(suffix) ? DIGITS : ALPHABET;
    material =
      Array.from({ length: length - 1 }, () => ALPHABET[randomInt(ALPHABET.length)]).join('') +
      last[randomInt(last.length)] +
      suffix;
  } while (!everyWindowUnlikeAnId(material));
  seedSecret(label, material);
  return `${prefix}${material}`;
}

function everyWindowUnlikeAnId(text: string): boolean {
  for (let at = 0; at + LEAK_FRAGMENT_LENGTH <= text.length; at += 1)
    if (text.slice(at, at + LEAK_FRAGMENT_LENGTH).replace(/[0-9a-f]/gi, '').length < 2) return false;
  return true;
}

export interface SuiteScan {
  secrets: number;
  responses: number;
  logLines: number;
  /** Spans exported to the stacks' collectors (traces.ts). */
  spans: number;
  /** One readable paragraph per leak: the secret and its test file, where, and the text before it with the fragment starred. */
  leaks: string[];
}

/** Scans every response, log line and exported span written to `dir` for every seeded secret. */
export function scanSuite(dir: string): SuiteScan {
  const files = readdirSync(dir);
  const lines = (name: string) => readFileSync(path.join(dir, name), 'utf8').split('\n').filter(Boolean);
  const seeds = files
    .filter((name) => name.startsWith('secrets-'))
    .flatMap(lines)
    .map((line) => JSON.parse(line) as SeededRecord);
  const matcher = new FragmentIndex<SeededRecord>();
  for (const seed of seeds) matcher.add(seed.secret, seed);
  const leaks: string[] = [];
  let responses = 0;
  let logLines = 0;
  for (const name of files.filter((file) => file.startsWith('responses-'))) {
    for (const line of lines(name)) {
      responses += 1;
      const response = JSON.parse(line) as ResponseRecord;
      for (const found of matcher.find(response.body))
        leaks.push(
          describe(
            found,
            `the response to ${response.method} ${response.url} (${response.status}, as ${response.caller ?? '?'}) received by ${response.file} › ${response.test}`,
          ),
        );
    }
  }
  for (const name of files.filter((file) => file.startsWith('log-'))) {
    lines(name).forEach((line, index) => {
      logLines += 1;
      for (const found of matcher.find(line))
        leaks.push(describe(found, `the log of ${serviceOf(line)}, ${name} line ${index + 1}`));
    });
  }
  let spans = 0;
  for (const name of files.filter((file) => file.startsWith('spans-'))) {
    lines(name).forEach((line, index) => {
      const { body } = JSON.parse(line) as { body: string };
      spans += (body.match(/"spanId"/g) ?? []).length;
      for (const found of matcher.find(body))
        leaks.push(describe(found, `a span exported to the stack's collector, ${name} export ${index + 1}`));
    });
  }
  return { secrets: seeds.length, responses, logLines, spans, leaks };
}

/** The service that wrote a log line (read only for a line that leaked). */
function serviceOf(line: string): string {
  try {
    return String((JSON.parse(line) as { service?: unknown }).service);
  } catch {
    return '?'; // a line that is no JSON is scanned all the same
  }
}

function describe({ value: seed, at, form }: Fragment<SeededRecord>, where: string): string {
  const before = form.slice(Math.max(0, at - 60), at).replace(/\s+/g, ' ');
  return `a fragment of "${seed.label}" (seeded by ${seed.file}) in ${where}\n    at ${at}: ...${before}[${'*'.repeat(LEAK_FRAGMENT_LENGTH)}]`;
}
