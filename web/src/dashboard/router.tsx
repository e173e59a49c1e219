import { type AnchorHTMLAttributes, type MouseEvent, useSyncExternalStore } from 'react';

/** A router for a handful of paths under /dashboard: history API, no library. */

const listeners = new Set<() => void>();
let focusRequested = false;

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  window.addEventListener('popstate', listener);
  return () => {
    listeners.delete(listener);
    window.removeEventListener('popstate', listener);
  };
}

const currentPath = () => window.location.pathname.replace(/\/+$/, '') || '/';

export function usePath(): string {
  return useSyncExternalStore(subscribe, currentPath);
}

export function navigate(to: string, options: { replace?: boolean; focus?: boolean } = {}): void {
  if (options.replace) window.history.replaceState(null, '', to);
  else window.history.pushState(null, '', to);
  // A page change moves focus to the new page's heading, as a page load would.
  focusRequested = options.focus ?? true;
  for (const listener of listeners) listener();
  if (!options.replace) window.scrollTo(0, 0);
}

/** True once after a client-side navigation: the new page should take focus. */
export function takeFocusRequest(): boolean {
  const requested = focusRequested;
  focusRequested = false;
  return requested;
}

export function Link({
  to,
  onClick,
  ...props
}: { to: string } & Omit<AnchorHTMLAttributes<HTMLAnchorElement>, 'href'>) {
  function handleClick(event: MouseEvent<HTMLAnchorElement>) {
    onClick?.(event);
    if (
      event.defaultPrevented ||
      event.button !== 0 ||
      event.metaKey ||
      event.ctrlKey ||
      event.shiftKey ||
      event.altKey
    ) {
      return;
    }
    event.preventDefault();
    navigate(to);
  }
  return <a href={to} onClick={handleClick} {...props} />;
}
