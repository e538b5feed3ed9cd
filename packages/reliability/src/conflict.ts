/** What a decision answers when its conditional write found that another change came first. */
export const LOST_RACE = Symbol('lost the race');

export interface ConflictOptions {
  /** Decisions in all, the first included. */
  tries: number;
  /** What is thrown when every decision lost its race. */
  keptChanging: () => Error;
}

/**
 * Decides and writes until the write wins: `decide` reads what is stored, decides from it and
 * writes conditionally (a unique insert, a version-conditional update); when another change came
 * first it answers LOST_RACE and is called again, at most `tries` times in all. Then
 * `keptChanging()` is thrown. No wait between tries: the winner's write is already stored, so the
 * next read sees it.
 */
export async function retryOnConflict<T>(
  decide: (attempt: number) => Promise<T | typeof LOST_RACE>,
  options: ConflictOptions,
): Promise<T> {
  for (let attempt = 1; attempt <= options.tries; attempt += 1) {
    const outcome = await decide(attempt);
    if (outcome !== LOST_RACE) return outcome;
  }
  throw options.keptChanging();
}
