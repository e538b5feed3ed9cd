/**
 * `pnpm check:docs`, part of `pnpm check`:
 *
 * 1. No tracker references in source, tests, docs or API text. A reader of the code or of the
 *    published OpenAPI document has no access to the tracker, and a number says when a line was
 *    written, not why it is so: say the reason instead. Decision records are cited by their own
 *    number ("decision 0046", docs/decisions/0046-...), which is not a tracker reference.
 * 2. Every relative link in a markdown file leads to a file that exists and, with `#anchor`, to a
 *    heading of that file.
 *
 * Prints each finding as `file:line: ...` and exits 1 when there is any.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

const REPO = path.resolve(__dirname, '..');

const TEXT_FILES = /\.(ts|tsx|js|cjs|mjs|mts|json|md|sh|ya?ml|go|css|html|txt)$|(^|\/)(Dockerfile|run)$/;
/** Files that are not the project's prose: lockfiles and checksums hold hashes that look like anything. */
const SKIPPED = /(^|\/)(pnpm-lock\.yaml|go\.sum)$/;

/**
 * "issue 12", "issues 28 and 29", "issue #12", "issue-22", "ticket 7", "PR 3", "pull request #4",
 * "(#12)" and "GH-12". Built from parts so this file does not match itself.
 */
const TRACKER_REFERENCES = [
  new RegExp(String.raw`\b(issues?|tickets?|PRs?|pull requests?)[ -]?#?\d+`, 'i'),
  new RegExp(String.raw`\(#\d+\)`),
  new RegExp(String.raw`\bGH-\d+\b`),
];

function repositoryFiles(): string[] {
  const listed = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], {
    cwd: REPO,
    encoding: 'utf8',
  });
  return listed
    .split('\n')
    .filter(
      (file) => file && TEXT_FILES.test(file) && !SKIPPED.test(file) && existsSync(path.join(REPO, file)),
    );
}

function trackerReferences(file: string, lines: string[]): string[] {
  const found: string[] = [];
  lines.forEach((line, index) => {
    const match = TRACKER_REFERENCES.map((pattern) => pattern.exec(line)).find((m) => m !== null);
    if (match) found.push(`${file}:${index + 1}: tracker reference "${match[0]}": say why instead`);
  });
  return found;
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
export function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  for (const line of withoutCode(markdown.split('\n'), false)) {
    const heading = /^#{1,6}\s+(.*)$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const base = slug(heading);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    result.add(count === 0 ? base : `${base}-${count}`);
  }
  return result;
}

/** The lines outside fenced code blocks (blanked, so line numbers stay), inline code removed too. */
function withoutCode(lines: string[], inline = true): string[] {
  let fenced = false;
  return lines.map((line) => {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced;
      return '';
    }
    if (fenced) return '';
    return inline ? line.replace(/`[^`]*`/g, '') : line;
  });
}

const LINK = /\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g;

function brokenLinks(file: string, text: string): string[] {
  const found: string[] = [];
  withoutCode(text.split('\n')).forEach((line, index) => {
    for (const [, target] of line.matchAll(LINK)) {
      if (!target || /^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto:
      const [relative, anchor] = target.split('#', 2) as [string, string | undefined];
      const resolved = relative
        ? path.resolve(path.dirname(path.join(REPO, file)), relative)
        : path.join(REPO, file);
      const where = `${file}:${index + 1}: link ${target}`;
      if (!existsSync(resolved)) {
        found.push(`${where}: no such file`);
      } else if (anchor && statSync(resolved).isFile() && resolved.endsWith('.md')) {
        if (!anchors(readFileSync(resolved, 'utf8')).has(anchor)) found.push(`${where}: no such heading`);
      }
    }
  });
  return found;
}

export function docFindings(): string[] {
  const findings: string[] = [];
  for (const file of repositoryFiles()) {
    if (file === 'scripts/check-docs.ts') continue;
    const text = readFileSync(path.join(REPO, file), 'utf8');
    findings.push(...trackerReferences(file, text.split('\n')));
    if (file.endsWith('.md')) findings.push(...brokenLinks(file, text));
  }
  return findings;
}

if (require.main === module) {
  const findings = docFindings();
  for (const finding of findings) process.stderr.write(`${finding}\n`);
  if (findings.length > 0) {
    process.stderr.write(`check:docs: ${findings.length} finding(s)\n`);
    process.exit(1);
  }
  process.stdout.write('check:docs: no tracker references, every relative link resolves\n');
}
