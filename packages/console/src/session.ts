/**
 * The signed-in person: the token lives in sessionStorage only (gone when the browser session
 * ends, never in localStorage or a cookie), the user it belongs to in memory.
 */
import type { Me } from './api/types';

const KEY = 'pack.console.token';
const SIGNED_IN = 'pack.console.signed-in';
type Listener = () => void;
const listeners = new Set<Listener>();
let me: Me | null = null;
let endedReason: string | null = null;

export const session = {
  token(): string | null {
    return window.sessionStorage.getItem(KEY);
  },
  me(): Me | null {
    return me;
  },
  /** Why the last session ended without signing out (a refused token), shown at sign-in. */
  endedReason(): string | null {
    return endedReason;
  },
  /** Whether the token came from the password sign-in (and so ends with this session). */
  issuedBySignIn(): boolean {
    return window.sessionStorage.getItem(SIGNED_IN) === '1';
  },
  start(token: string, who: Me, { bySignIn }: { bySignIn?: boolean } = {}): void {
    window.sessionStorage.setItem(KEY, token);
    if (bySignIn !== undefined) window.sessionStorage.setItem(SIGNED_IN, bySignIn ? '1' : '0');
    me = who;
    endedReason = null;
    listeners.forEach((listener) => listener());
  },
  end(reason: string | null = null): void {
    window.sessionStorage.removeItem(KEY);
    window.sessionStorage.removeItem(SIGNED_IN);
    me = null;
    endedReason = reason;
    listeners.forEach((listener) => listener());
  },
  subscribe(listener: Listener): () => void {
    listeners.add(listener);
    return () => listeners.delete(listener);
  },
};
