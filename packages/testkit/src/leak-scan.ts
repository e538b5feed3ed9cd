import { Writable } from 'node:stream';

/** The shortest piece of a secret that counts as a leak (issue 20: "any 6-character or longer fragment"). */
export const LEAK_FRAGMENT_LENGTH = 6;

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
  private readonly windows = new Map<string, string>();
  readonly leaks: Leak[] = [];

  constructor(private readonly fragment = LEAK_FRAGMENT_LENGTH) {}

  seed(label: string, secret: string): this {
    if (secret.length < this.fragment)
      throw new Error(
        `secret ${label} is shorter than ${this.fragment} characters: it cannot be scanned for`,
      );
    this.seeded.set(label, secret);
    const lower = secret.toLowerCase();
    for (let at = 0; at + this.fragment <= lower.length; at += 1)
      this.windows.set(lower.slice(at, at + this.fragment), label);
    return this;
  }

  get secrets(): ReadonlyMap<string, string> {
    return this.seeded;
  }

  /** The leaks in `text` (also recorded in `leaks`). */
  scan(where: string, text: string): Leak[] {
    const found: Leak[] = [];
    const seen = new Set<string>();
    for (const form of readings(text)) {
      const lower = form.toLowerCase();
      for (const [window, label] of this.windows) {
        const at = lower.indexOf(window);
        if (at < 0 || seen.has(label)) continue;
        seen.add(label);
        const context = `${form.slice(Math.max(0, at - 30), at)}[${'*'.repeat(window.length)}]`;
        found.push({ where, secret: label, context: `at ${at}: ${context}` });
      }
    }
    this.leaks.push(...found);
    return found;
  }

  /** A pino destination: every line written to it is scanned (and kept, for a failure message). */
  logDestination(where = 'log'): Writable & { lines: string[] } {
    const lines: string[] = [];
    const scan = (line: string) => {
      lines.push(line);
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

  /** The leaks as readable lines (for `expect(...).toEqual([])`), secrets starred. */
  report(): string[] {
    return this.leaks.map((leak) => `${leak.where}: a fragment of ${leak.secret} ${leak.context}`);
  }
}

/** The text as it reads raw, with percent-escapes decoded and with JSON escapes decoded. */
function readings(text: string): string[] {
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
