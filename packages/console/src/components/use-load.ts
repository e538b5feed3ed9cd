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

/** A paged list: `load` gets the page's limit and offset (as the API's query takes them). */
export function usePaged<T>(
  load: (page: { limit: number; offset: number }) => Promise<T>,
  { limit, deps = [] }: { limit: number; deps?: readonly unknown[] },
): Loaded<T> & { offset: number; limit: number; setOffset: (offset: number) => void } {
  const [offset, setOffset] = useState(0);
  const loaded = useLoad(() => load({ limit, offset }), [offset, ...deps]);
  return { ...loaded, offset, limit, setOffset };
}
