/** What a decision answers when its conditional write found that another change came first. */
export const LOST_RACE = Symbol('lost the race');

export interface ConflictOptions {
  /** Decisions in all, the first included. */
  tries: number;
  /** What is thrown when every decision lost its race (told the last error a lost race threw). */
  keptChanging: (lastError?: unknown) => Error;
  /**
   * True: this thrown error is a lost race too (a unique insert that found the key taken by a
   * writer that came first), and the decision is made again.
   */
  lostRace?: (error: unknown) => boolean;
  /** Wait before decision `attempt + 1` (ms), for many writers on one record; none unless told. */
  pauseMs?: (attempt: number) => number;
  sleep?: (ms: number) => Promise<void>;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Decides and writes until the write wins: `decide` reads what is stored, decides from it and
 * writes conditionally (a unique insert, a version-conditional update); when another change came
 * first it answers LOST_RACE (or throws what `lostRace` picks) and is called again, at most
 * `tries` times in all. Then `keptChanging()` is thrown. No wait between tries unless `pauseMs`
 * asks for one: the winner's write is already stored, so the next read sees it.
 */
export async function retryOnConflict<T>(
  decide: (attempt: number) => Promise<T | typeof LOST_RACE>,
  options: ConflictOptions,
): Promise<T> {
  let lastError: unknown;
  for (let attempt = 1; attempt <= options.tries; attempt += 1) {
    if (attempt > 1 && options.pauseMs) await (options.sleep ?? sleep)(options.pauseMs(attempt - 1));
    try {
      const outcome = await decide(attempt);
      if (outcome !== LOST_RACE) return outcome;
    } catch (error) {
      if (!options.lostRace?.(error)) throw error;
      lastError = error;
    }
  }
  throw options.keptChanging(lastError);
}
