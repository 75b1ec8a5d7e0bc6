/**
 * The console's pages are paths of one page (`/`, `/runs/<id>`, `/directives`, `/directives/<id>`):
 * links change the address with the History API and the app draws the page the path names, so
 * every address can be shared and reloaded.
 */
import { signal } from '@preact/signals';

/** The path and query shown now. */
export const location = signal(window.location.pathname + window.location.search);

/** Goes to `to` (a path of this server), adding it to the history. */
export function navigate(to: string, replace = false): void {
  if (replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  location.value = to;
  window.scrollTo(0, 0);
}

window.addEventListener('popstate', () => {
  location.value = window.location.pathname + window.location.search;
});

// Plain links to this server's pages are followed in the page (modifier keys open a new tab).
document.addEventListener('click', (e) => {
  const a = (e.target as Element | null)?.closest?.('a');
  if (
    !a ||
    e.defaultPrevented ||
    e.button !== 0 ||
    e.metaKey ||
    e.ctrlKey ||
    e.shiftKey ||
    e.altKey
  )
    return;
  const href = a.getAttribute('href');
  if (href === null || !href.startsWith('/') || href.startsWith('//') || a.target !== '') return;
  if (href.startsWith('/v1/') || href.startsWith('/console/')) return;
  e.preventDefault();
  navigate(href);
});

/** A page the path names. */
export type Route =
  | { page: 'runs' }
  | { page: 'run'; runId: string }
  | { page: 'directives' }
  | { page: 'directive'; id: string };

/** The page of `path`. */
export function routeOf(path: string): Route {
  const p = path.split('?')[0]!;
  let m = /^\/runs\/([A-Za-z0-9_-]+)\/?$/.exec(p);
  if (m) return { page: 'run', runId: m[1]! };
  if (/^\/directives\/?$/.test(p)) return { page: 'directives' };
  m = /^\/directives\/(.+)$/.exec(p);
  if (m) return { page: 'directive', id: decodeURIComponent(m[1]!) };
  return { page: 'runs' };
}

/** The query parameters of the current address. */
export function params(): URLSearchParams {
  return new URLSearchParams(location.value.split('?')[1] ?? '');
}
