/** The sign-in form: an API token, kept for this tab's session. */
import { useState } from 'preact/hooks';
import { setToken, token } from './api';

/** See the module comment. */
export function SignIn() {
  const [value, setValue] = useState('');
  const [error, setError] = useState<string | undefined>(
    token.value === '' ? undefined : 'The server did not accept the token.',
  );
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    const candidate = value.trim();
    try {
      const res = await fetch('/v1/info', { headers: { authorization: `Bearer ${candidate}` } });
      if (res.ok) setToken(candidate);
      else
        setError(
          res.status === 401
            ? 'That token is not one this server accepts.'
            : `The server answered ${res.status}.`,
        );
    } catch (err) {
      setError(`The server did not answer: ${(err as Error).message}`);
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="sign-in" id="main">
      <form onSubmit={(e) => void submit(e)} aria-labelledby="sign-in-title">
        <h1 id="sign-in-title">Dirigent</h1>
        <p class="muted">
          This server asks for an API token (one of DIRIGENT_API_TOKENS or its --tokens-file). It is
          kept for this browser tab only.
        </p>
        <label for="token">API token</label>
        <input
          id="token"
          name="token"
          type="password"
          autoComplete="current-password"
          required
          autoFocus
          value={value}
          onInput={(e) => setValue((e.target as HTMLInputElement).value)}
        />
        {error !== undefined && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" disabled={busy}>
          Sign in
        </button>
      </form>
    </main>
  );
}
