import { Writable } from 'node:stream';
import { isSecretFieldName } from '@pack/contracts';
import { FragmentIndex, LEAK_FRAGMENT_LENGTH } from './fragment-index';

export { LEAK_FRAGMENT_LENGTH, readings } from './fragment-index';

export interface Leak {
  /** Where the text came from (a route and caller, a log line). */
  where: string;
  /** The label the secret was seeded under (never the secret itself). */
  secret: string;
  /** Where in the text the fragment starts, and the text before it with the fragment starred. */
  context: string;
}

/**
 * Finds seeded secrets in text a user or an operator could read: response bodies, log lines.
 * A leak is any piece of LEAK_FRAGMENT_LENGTH or more characters of a secret, in any letter
 * case, also when the text carries it percent-encoded (%2B) or JSON-escaped (\u002b, \/).
 * Seed only the secret material, not a public prefix (`whsec_`, `Bearer `), and make seeded
 * secrets random: a fragment that is an ordinary word would be found in ordinary text.
 */
export class LeakScan {
  private readonly seeded = new Map<string, string>();
  /** The secrets' pieces, each standing for its secret's label. */
  private readonly pieces = new FragmentIndex<string>();
  /** Labels of secrets with a character no id has: their id-like pieces inside ids are chance. */
  private readonly notIdLike = new Set<string>();
  readonly leaks: Leak[] = [];
  /** Log lines scanned so far, by every destination of this scan, with where they were written. */
  private readonly logged: [where: string, line: string][] = [];

  /**
   * `only`: which pieces to look for (all by default). seedFrom looks only for pieces that cannot
   * be a word: a test's readable secret (`e2e-client-secret-PLAINTEXT`) would otherwise be found
   * in a route name or a message (`plaintext settings read`).
   */
  seed(label: string, secret: string, only: (piece: string) => boolean = () => true): this {
    if (secret.length < LEAK_FRAGMENT_LENGTH)
      throw new Error(
        `secret ${label} is shorter than ${LEAK_FRAGMENT_LENGTH} characters: it cannot be scanned for`,
      );
    this.seeded.set(label, secret);
    if (!/^[0-9a-f-]*$/i.test(secret)) this.notIdLike.add(label);
    this.pieces.add(secret, label, only);
    return this;
  }

  /**
   * Seeds the value of every secret-named field (SECRET_FIELD_NAMES: authorization, api_key,
   * credentials, token, secret, passwords...) found at any depth of a request or response body,
   * without its public prefix (`Bearer `, `whsec_`, `pack_`, `sk-`); masks and values shorter than
   * the fragment are left out, and only pieces that cannot be a word are looked for (`wordless`).
   * Returns how many were new.
   */
  seedFrom(body: unknown, source: string): number {
    let added = 0;
    const walk = (value: unknown, path: string, depth: number) => {
      if (depth > 20 || value === null || typeof value !== 'object') return;
      for (const [key, inner] of Object.entries(value)) {
        const at = path ? `${path}.${key}` : key;
        if (typeof inner === 'string' && isSecretFieldName(key)) {
          const material = inner.replace(PUBLIC_PREFIX, '');
          if (material.length < LEAK_FRAGMENT_LENGTH || material.startsWith('*')) continue;
          if ([...this.seeded.values()].includes(material)) continue;
          this.seed(`${at} of ${source}`, material, wordless);
          added += 1;
        } else walk(inner, at, depth + 1);
      }
    };
    walk(body, '', 0);
    return added;
  }

  get secrets(): ReadonlyMap<string, string> {
    return this.seeded;
  }

  /** The leaks in `text` (also recorded in `leaks`). */
  scan(where: string, text: string): Leak[] {
    const found = this.pieces
      .find(text, (label, lower, at) => !this.chanceInIds(lower, at, label))
      .map(({ value, at, form }) => ({
        where,
        secret: value,
        context: `at ${at}: ${form.slice(Math.max(0, at - 30), at)}[${'*'.repeat(LEAK_FRAGMENT_LENGTH)}]`,
      }));
    this.leaks.push(...found);
    return found;
  }

  /**
   * Whether the piece at `at` is chance, not a leak. Log lines carry long ids: hex trace, span
   * and envelope ids, and request and correlation ids that are UUIDs (hex in dashed groups). A
   * random base64url secret has pieces made of those characters alone (about one in six hundred
   * windows all hex, more with its dashes), which turn up in such ids by chance now and then: such
   * a window inside a run of id characters longer than itself is no leak of a secret that has
   * other characters, since that secret, leaked, shows them too.
   */
  private chanceInIds(lower: string, at: number, label: string): boolean {
    const size = LEAK_FRAGMENT_LENGTH;
    return (
      this.notIdLike.has(label) &&
      ID_LIKE.test(lower.slice(at, at + size)) &&
      idRunAround(lower, at, size) > size
    );
  }

  /** A pino destination: every line written to it is scanned (and kept, for a failure message). */
  logDestination(where = 'log'): Writable & { lines: string[] } {
    const lines: string[] = [];
    const scan = (line: string) => {
      lines.push(line);
      this.logged.push([`${where} line ${lines.length}`, line]);
      this.scan(`${where} line ${lines.length}`, line);
    };
    let partial = '';
    const stream = new Writable({
      write(chunk: Buffer | string, _encoding, done) {
        const text = partial + chunk.toString();
        const parts = text.split('\n');
        partial = parts.pop() ?? '';
        for (const line of parts) if (line !== '') scan(line);
        done();
      },
      final(done) {
        if (partial !== '') scan(partial);
        done();
      },
    });
    return Object.assign(stream, { lines });
  }

  /** Every log line its destinations received (tests read what the services logged). */
  loggedLines(): string[] {
    return this.logged.map(([, line]) => line);
  }

  /** How many log lines its destinations received. */
  get lines(): number {
    return this.logged.length;
  }

  /** Scans every log line again: a secret seeded after a line was written is looked for too. */
  rescanLogs(): void {
    for (const [where, line] of this.logged) this.scan(where, line);
  }

  /** The leaks as readable lines (for `expect(...).toEqual([])`), secrets starred; each once. */
  report(): string[] {
    return [
      ...new Set(this.leaks.map((leak) => `${leak.where}: a fragment of ${leak.secret} ${leak.context}`)),
    ];
  }
}

/** The characters of the ids log lines carry (lower case): hex, and a UUID's dashes. */
const ID_LIKE = /^[0-9a-f-]+$/;
const isIdChar = (char: string | undefined) => char !== undefined && /[0-9a-f-]/.test(char);

/** The length of the run of id characters that holds text[at, at + length). */
function idRunAround(text: string, at: number, length: number): number {
  let start = at;
  let end = at + length;
  while (isIdChar(text[start - 1])) start -= 1;
  while (isIdChar(text[end])) end += 1;
  return end - start;
}

/** A piece with a digit and a letter, or with both letter cases: no word of a route or message. */
const wordless = (piece: string) =>
  (/\d/.test(piece) && /[a-z]/i.test(piece)) || (/[a-z]/.test(piece) && /[A-Z]/.test(piece));

/** What a secret value starts with that is no secret: an auth scheme, a kind marker. */
const PUBLIC_PREFIX = /^(?:(?:bearer|basic|token)\s+)?(?:whsec_|pack_|sk-)?/i;
