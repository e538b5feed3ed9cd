/** The shortest piece of a secret that counts as a leak ("any 6-character or longer fragment"). */
export const LEAK_FRAGMENT_LENGTH = 6;

/** Where a secret's piece shows in a text: in which of its readings, and at what position. */
export interface Fragment<T> {
  value: T;
  at: number;
  /** The reading of the text it is in (raw, percent- or JSON-decoded). */
  form: string;
}

/**
 * Every 6-character piece of the secrets added, lower-cased, looked up at each position of a
 * text: a scan costs the length of the text, however many secrets were added. A rolling hash
 * rules most positions out with one array read. A piece found by chance inside a random token
 * (chanceInToken) is no find.
 */
export class FragmentIndex<T> {
  /** Each piece, with the value it stands for and its secret (lower-cased). */
  private readonly windows = new Map<string, { value: T; secret: string }>();
  /** Which rolling hashes (low 20 bits) a window has. */
  private readonly hashes = new Uint8Array(HASH_SLOTS);

  /** Adds the pieces of `secret` that `only` keeps, each standing for `value`. */
  add(secret: string, value: T, only: (piece: string) => boolean = () => true): void {
    const lower = secret.toLowerCase();
    for (let at = 0; at + LEAK_FRAGMENT_LENGTH <= secret.length; at += 1) {
      if (!only(secret.slice(at, at + LEAK_FRAGMENT_LENGTH))) continue;
      const window = lower.slice(at, at + LEAK_FRAGMENT_LENGTH);
      this.windows.set(window, { value, secret: lower });
      this.hashes[hashOf(window, 0) & SLOT_MASK] = 1;
    }
  }

  /**
   * The first place each value's pieces show in `text` (raw, percent- or JSON-decoded, any
   * case) that `accept` takes (a lower-cased reading and the position, for a rule on what is
   * around it).
   */
  find(text: string, accept: (value: T, lower: string, at: number) => boolean = () => true): Fragment<T>[] {
    if (this.windows.size === 0) return [];
    const found = new Map<T, Fragment<T>>();
    const hashes = this.hashes;
    for (const form of readings(text)) {
      const lower = form.toLowerCase();
      const last = lower.length - LEAK_FRAGMENT_LENGTH;
      // The hash rolled in place (no call per character): this loop runs over every character
      // of every log line, span and response a test run scans.
      let hash = hashOf(lower, 0);
      for (let at = 0; at <= last; at += 1) {
        if (hashes[hash & SLOT_MASK] === 1) {
          const piece = this.windows.get(lower.slice(at, at + LEAK_FRAGMENT_LENGTH));
          if (
            piece !== undefined &&
            !found.has(piece.value) &&
            !chanceInToken(piece.secret, lower, at) &&
            accept(piece.value, lower, at)
          )
            found.set(piece.value, { value: piece.value, at, form });
        }
        if (at === last) break;
        const out = Math.imul(lower.charCodeAt(at), TOP);
        hash = (Math.imul((hash - out) | 0, BASE) + lower.charCodeAt(at + LEAK_FRAGMENT_LENGTH)) | 0;
      }
    }
    return [...found.values()];
  }
}

/**
 * Whether the piece of `secret` (lower-cased) at `at` of `lower` (a lower-cased reading) is
 * chance inside a random token, not a leak. The platform issues long random base64url strings (API
 * tokens, webhook secrets), and a run of the suite answers thousands of them: a 6-character piece of one
 * of the ~170 random secrets the tests seed turns up inside one, in any case, now and then (once
 * in some twenty runs: `pack_VZc[******]`). A secret leaked shows more of itself than one piece:
 * a piece with token characters on both sides, neither of them the secret's own next or previous
 * character, is such chance. A piece at a token's edge, or continued by the secret, is a leak.
 */
function chanceInToken(secret: string, lower: string, at: number): boolean {
  const size = LEAK_FRAGMENT_LENGTH;
  const [before, after] = [lower[at - 1], lower[at + size]];
  const piece = lower.slice(at, at + size);
  if (!isTokenChar(before) || !isTokenChar(after) || !TOKEN_LIKE.test(piece)) return false;
  for (let from = secret.indexOf(piece); from !== -1; from = secret.indexOf(piece, from + 1))
    if (secret[from - 1] === before || secret[from + size] === after) return false;
  return true;
}

/** The characters of a base64url token (lower case). */
const TOKEN_LIKE = /^[0-9a-z_-]+$/;
const isTokenChar = (char: string | undefined) => char !== undefined && /[0-9a-z_-]/.test(char);

/** The text as it reads raw, with percent-escapes decoded and with JSON escapes decoded. */
export function readings(text: string): string[] {
  const forms = [text];
  const percent = text.replace(/%([0-9a-fA-F]{2})/g, (_match, hex: string) =>
    String.fromCharCode(parseInt(hex, 16)),
  );
  if (percent !== text) forms.push(percent);
  const json = text.replace(/\\(u[0-9a-fA-F]{4}|["\\/bfnrt])/g, (_match, escape: string) =>
    escape.startsWith('u')
      ? String.fromCharCode(parseInt(escape.slice(1), 16))
      : (JSON.parse(`"\\${escape}"`) as string),
  );
  if (json !== text) forms.push(json);
  return forms;
}

const HASH_SLOTS = 1 << 20;
const SLOT_MASK = HASH_SLOTS - 1;

/** Polynomial hash of the LEAK_FRAGMENT_LENGTH characters from `at`, in 32 bits. */
const BASE = 131;
const TOP = Array.from({ length: LEAK_FRAGMENT_LENGTH - 1 }).reduce<number>(
  (power) => Math.imul(power, BASE),
  1,
);

function hashOf(text: string, at: number): number {
  let hash = 0;
  for (let i = at; i < at + LEAK_FRAGMENT_LENGTH; i += 1)
    hash = (Math.imul(hash, BASE) + text.charCodeAt(i)) | 0;
  return hash;
}
