// One definition in @pack/errors (no express there, so domain code can throw them); re-exported
// so that HTTP code keeps one import for everything it needs.
export * from '@pack/errors';

/**
 * An error express or its body reader raised with `status: 400` but none of our error types
 * (a path that does not percent-decode, a body its Content-Encoding does not decode): the error
 * handler would answer it as a 500, so the place that knows what was wrong names it instead.
 */
export function isBareBadRequest(error: unknown): error is { status: 400 } {
  return typeof error === 'object' && error !== null && (error as { status?: unknown }).status === 400;
}
