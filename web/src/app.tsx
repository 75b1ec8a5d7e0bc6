/**
 * The console: a header with the pages, the sign-in form when the server asks for a token, and
 * the page the address names.
 */
import { useEffect, useState } from 'preact/hooks';
import { api, setToken, signInNeeded, token } from './api';
import { DirectivePage } from './pages/directive-page';
import { DirectivesPage } from './pages/directives-page';
import { RunPage } from './pages/run-page';
import { RunsPage } from './pages/runs-page';
import { location, routeOf } from './router';
import { SignIn } from './sign-in';
import type { ServerInfo } from './types';

/** See the module comment. */
export function App() {
  const [info, setInfo] = useState<ServerInfo | undefined>();
  const [error, setError] = useState<string | undefined>();
  const signedIn = token.value;
  useEffect(() => {
    api<ServerInfo>('GET', '/v1/info')
      .then((i) => {
        setInfo(i);
        setError(undefined);
      })
      .catch((e: Error) => setError(e.message));
  }, [signedIn]);

  if (signInNeeded.value) return <SignIn />;
  const route = routeOf(location.value);
  const tab = route.page === 'runs' || route.page === 'run' ? 'runs' : 'directives';
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href="/">
          Dirigent
        </a>
        <nav aria-label="Pages">
          <a href="/" aria-current={tab === 'runs' ? 'page' : undefined}>
            Runs
          </a>
          <a href="/directives" aria-current={tab === 'directives' ? 'page' : undefined}>
            Directives
          </a>
        </nav>
        <span class="spacer" />
        {info && (
          <span class="muted small" title={`Dirigent ${info.version}`}>
            {info.mode === 'redis' ? 'Redis workers' : 'embedded'}
          </span>
        )}
        {token.value !== '' && (
          <button type="button" class="link" onClick={() => setToken('')}>
            Sign out
          </button>
        )}
      </header>
      <main id="main" tabIndex={-1}>
        {error !== undefined && info === undefined && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
        {route.page === 'runs' && <RunsPage />}
        {route.page === 'run' && <RunPage runId={route.runId} info={info} />}
        {route.page === 'directives' && <DirectivesPage />}
        {route.page === 'directive' && <DirectivePage id={route.id} />}
      </main>
    </>
  );
}
