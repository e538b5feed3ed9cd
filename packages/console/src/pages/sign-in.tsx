/** Sign-in with an API token, or with a directory (LDAP) user name and password. */
import { useState } from 'preact/hooks';
import { api, ok } from '../api/client';
import { ErrorNotice, Field, Notice } from '../components/ui';
import { navigate } from '../router';
import { consolePageOf } from '../routes';
import { session } from '../session';

async function begin(token: string, bySignIn: boolean) {
  const who = await ok(api.GET('/v1/core/me/', { headers: { authorization: `Token ${token}` } }));
  session.start(token, who, { bySignIn });
  const next = new URLSearchParams(window.location.search).get('next') ?? '';
  // Only a console page of this origin: never an address someone put in the link.
  navigate(
    next.startsWith('/') && !next.startsWith('//') && consolePageOf(next) && consolePageOf(next) !== 'sign-in'
      ? next
      : '/',
    {
      replace: true,
    },
  );
}

export function SignInPage() {
  const [token, setToken] = useState('');
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [tokenError, setTokenError] = useState<unknown>(null);
  const [passwordError, setPasswordError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const ended = session.endedReason();

  /** Runs one way of signing in; its error goes to its own form. */
  const attempt = (setError: (error: unknown) => void, run: () => Promise<void>) => async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await run();
    } catch (error) {
      setError(error);
    } finally {
      setBusy(false);
    }
  };
  const withToken = attempt(setTokenError, () => begin(token.trim(), false));
  const withPassword = attempt(setPasswordError, async () => {
    const signedIn = await ok(api.POST('/v1/core/auth/login/', { body: { username, password } }));
    await begin(signedIn.token, true);
  });

  return (
    <main id="main" class="sign-in">
      <h1>Pack platform console</h1>
      {ended && <Notice tone="warning">{ended}</Notice>}
      <div class="sign-in-forms">
        <form onSubmit={(event) => void withToken(event)} aria-labelledby="token-heading">
          <h2 id="token-heading">With an API token</h2>
          <Field label="API token" name="token" error={tokenError}>
            {(props) => (
              <input
                {...props}
                type="password"
                autoComplete="off"
                required
                value={token}
                onInput={(event) => setToken(event.currentTarget.value)}
              />
            )}
          </Field>
          <ErrorNotice error={tokenError} shownFields={['token']} />
          <button type="submit" class="primary" disabled={busy}>
            Sign in
          </button>
        </form>
        <form onSubmit={(event) => void withPassword(event)} aria-labelledby="password-heading">
          <h2 id="password-heading">With your directory account</h2>
          <Field label="User name" name="username" error={passwordError}>
            {(props) => (
              <input
                {...props}
                autoComplete="username"
                required
                value={username}
                onInput={(event) => setUsername(event.currentTarget.value)}
              />
            )}
          </Field>
          <Field label="Password" name="password" error={passwordError}>
            {(props) => (
              <input
                {...props}
                type="password"
                autoComplete="current-password"
                required
                value={password}
                onInput={(event) => setPassword(event.currentTarget.value)}
              />
            )}
          </Field>
          <ErrorNotice error={passwordError} shownFields={['username', 'password']} />
          <button type="submit" class="primary" disabled={busy}>
            Sign in with password
          </button>
        </form>
      </div>
      <p class="muted">The token is kept for this browser session only.</p>
    </main>
  );
}
