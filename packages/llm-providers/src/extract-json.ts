import { parseExactJson } from '@pack/contracts';

export type Extracted = { ok: true; value: unknown } | { ok: false; problem: string };

const FENCE = /```[a-zA-Z0-9_-]*[ \t]*\r?\n([\s\S]*?)\r?\n?```/g;

/**
 * The JSON value of a model's reply: the whole text, else the single fenced block, else the single
 * object or array found after leading prose. Two candidates are ambiguous and count as no JSON.
 * Numbers are exact (parseExactJson: a long id or decimal is an ExactNumber, not a rounded double).
 */
export function extractJson(text: string): Extracted {
  const whole = tryParse(text.trim());
  if (whole.ok) return whole;
  const fences = [...text.matchAll(FENCE)].map((m) => m[1]!);
  if (fences.length > 1)
    return { ok: false, problem: `the reply has ${fences.length} code blocks, expected one` };
  if (fences.length === 1) {
    const fenced = tryParse(fences[0]!.trim());
    return fenced.ok ? fenced : { ok: false, problem: 'the code block is not valid JSON' };
  }
  const found = embeddedValues(text);
  if (found.length === 1) return { ok: true, value: found[0] };
  if (found.length > 1)
    return { ok: false, problem: `the reply has ${found.length} JSON values, expected one` };
  return { ok: false, problem: 'the reply is not JSON' };
}

function tryParse(text: string): Extracted {
  try {
    return { ok: true, value: parseExactJson(text) };
  } catch {
    return { ok: false, problem: 'not JSON' };
  }
}

/** Top-level objects and arrays in running text: balanced brackets, strings respected. */
function embeddedValues(text: string): unknown[] {
  const values: unknown[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c !== '{' && c !== '[') {
      i++;
      continue;
    }
    const end = balancedEnd(text, i);
    const parsed = end < 0 ? undefined : tryParse(text.slice(i, end + 1));
    if (parsed?.ok) {
      values.push(parsed.value);
      i = end + 1;
    } else i++;
  }
  return values;
}

function balancedEnd(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') {
      depth--;
      if (depth === 0) return i;
    }
  }
  return -1;
}
