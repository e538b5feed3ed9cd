/** A string or number field of a thrown value (`code`, `responseCode`), as text; '' when absent. */
export function errorField(error: unknown, name: string): string {
  const value =
    typeof error === 'object' && error !== null ? (error as Record<string, unknown>)[name] : undefined;
  return typeof value === 'string' || typeof value === 'number' ? String(value) : '';
}

/** The `code`s along an error's cause chain, outermost first (libraries wrap socket errors). */
export function errorCodes(error: unknown, depth = 5): string[] {
  const codes: string[] = [];
  let current: unknown = error;
  for (let i = 0; i < depth && typeof current === 'object' && current !== null; i += 1) {
    const code = errorField(current, 'code');
    if (code) codes.push(code);
    current = (current as { cause?: unknown }).cause;
  }
  return codes;
}
