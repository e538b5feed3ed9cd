/**
 * The general settings as every page sees them (banner, feedback link, currency, table refresh,
 * what the AI Integration shows): read at sign-in, on every navigation and every 30 seconds.
 */
import { useEffect, useState } from 'preact/hooks';
import { api, ok } from './api/client';
import type { Settings } from './api/types';

const POLL_SECONDS = 30;
let current: Settings | null = null;
let failure: unknown = null;
const listeners = new Set<() => void>();
let timer: number | undefined;

function publish() {
  listeners.forEach((listener) => listener());
}

export async function refreshSettings(): Promise<void> {
  try {
    current = await ok(api.GET('/v1/core/general_settings/'));
    failure = null;
  } catch (error) {
    failure = error;
  }
  publish();
}

export function startSettings(): void {
  stopSettings();
  void refreshSettings();
  timer = window.setInterval(() => {
    if (document.visibilityState !== 'hidden') void refreshSettings();
  }, POLL_SECONDS * 1000);
}

export function stopSettings(): void {
  window.clearInterval(timer);
  current = null;
  failure = null;
}

export function useSettings(): { settings: Settings | null; error: unknown } {
  const [, setVersion] = useState(0);
  useEffect(() => {
    const listener = () => setVersion((version) => version + 1);
    listeners.add(listener);
    // Settings read between the first render and this subscription are picked up now.
    listener();
    return () => void listeners.delete(listener);
  }, []);
  return { settings: current, error: failure };
}
