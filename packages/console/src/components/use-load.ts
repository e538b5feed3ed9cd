/** Loads data for a page: loading, the data or the error, and a reload; stale answers are dropped. */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';

export interface Loaded<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => Promise<void>;
}

export function useLoad<T>(load: () => Promise<T>, deps: readonly unknown[]): Loaded<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<unknown>(null);
  const [loading, setLoading] = useState(true);
  const generation = useRef(0);
  const run = useCallback(load, deps);
  const reload = useCallback(async () => {
    const mine = ++generation.current;
    setLoading(true);
    try {
      const value = await run();
      if (mine !== generation.current) return;
      setData(value);
      setError(null);
    } catch (failure) {
      if (mine === generation.current) setError(failure);
    } finally {
      if (mine === generation.current) setLoading(false);
    }
  }, [run]);
  useEffect(() => {
    void reload();
  }, [reload]);
  return { data, error, loading, reload };
}

/** Calls `tick` every `seconds` while `enabled`, and not while the tab is hidden. */
export function useInterval(tick: () => void, seconds: number | null): void {
  const latest = useRef(tick);
  latest.current = tick;
  useEffect(() => {
    if (!seconds || seconds <= 0) return;
    const timer = window.setInterval(() => {
      if (document.visibilityState !== 'hidden') latest.current();
    }, seconds * 1000);
    return () => window.clearInterval(timer);
  }, [seconds]);
}

/** The key a `next` link carries (its `after`), if any. */
export function afterOf(next: string | null | undefined): string | undefined {
  if (!next) return undefined;
  return new URL(next, 'http://relative.invalid').searchParams.get('after') ?? undefined;
}

/**
 * Where a list was walked to by its `next` links: the key (`after`) of every page after the
 * first. A page by key costs the server the same at any depth, where one by offset costs its
 * depth; Previous goes back along the keys walked. Another `deps` (a filter) starts again.
 */
export function usePageKeys(limit: number, deps: readonly unknown[] = []) {
  const depsKey = JSON.stringify(deps);
  const [walk, setWalk] = useState({ deps: depsKey, keys: [] as string[] });
  const keys = walk.deps === depsKey ? walk.keys : [];
  const after = keys.at(-1);
  return {
    limit,
    index: keys.length,
    after,
    query: after === undefined ? { limit } : { limit, after },
    forward: (next: string | null | undefined) => {
      const key = afterOf(next);
      if (key !== undefined) setWalk({ deps: depsKey, keys: [...keys, key] });
    },
    back: () => setWalk({ deps: depsKey, keys: keys.slice(0, -1) }),
  };
}
export type PageKeys = ReturnType<typeof usePageKeys>;

/** A paged list: `load` gets the page's limit and the key it starts after (as the API's query takes them). */
export function usePaged<T>(
  load: (page: { limit: number; after?: string }) => Promise<T>,
  { limit, deps = [] }: { limit: number; deps?: readonly unknown[] },
): Loaded<T> & { keys: PageKeys } {
  const keys = usePageKeys(limit, deps);
  const loaded = useLoad(() => load(keys.query), [keys.after, ...deps]);
  return { ...loaded, keys };
}
