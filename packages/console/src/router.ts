/** History routing without a library: the path is the state; links and code navigate. */
import { useEffect, useState } from 'preact/hooks';

const EVENT = 'console:navigate';

export function navigate(to: string, { replace = false } = {}): void {
  if (replace) window.history.replaceState(null, '', to);
  else window.history.pushState(null, '', to);
  window.dispatchEvent(new Event(EVENT));
}

export interface Location {
  path: string;
  query: URLSearchParams;
}

const current = (): Location => ({
  path: window.location.pathname,
  query: new URLSearchParams(window.location.search),
});

export function useLocation(): Location {
  const [location, setLocation] = useState(current);
  useEffect(() => {
    const update = () => setLocation(current());
    window.addEventListener('popstate', update);
    window.addEventListener(EVENT, update);
    return () => {
      window.removeEventListener('popstate', update);
      window.removeEventListener(EVENT, update);
    };
  }, []);
  return location;
}

/** A same-origin link followed without reloading the page (modified clicks open as usual). */
export function followLink(event: MouseEvent, href: string): void {
  if (
    event.defaultPrevented ||
    event.button !== 0 ||
    event.metaKey ||
    event.ctrlKey ||
    event.shiftKey ||
    event.altKey
  )
    return;
  event.preventDefault();
  navigate(href);
}
