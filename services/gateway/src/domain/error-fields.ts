/** A string or number field of a thrown value (`code`, `responseCode`), as text; '' when absent. */
export function errorField(error: unknown, name: string): string {
  const value =
    typeof error === 'object' && error !== null ? (error as Record<string, unknown>)[name] : undefined;
  return typeof value === 'string' || typeof value === 'number' ? String(value) : '';
}
