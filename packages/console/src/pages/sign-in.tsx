/**
 * Sign-in with an API token, with a directory (LDAP) user name and password, or through the
 * identity provider (when it is on), whose sign-in comes back here with the token in the fragment.
 */
import { useEffect, useState } from 'preact/hooks';
import { api, ok } from '../api/client';
import { ErrorNotice, Field, Notice } from '../components/ui';
import { navigate } from '../router';
import { consolePageOf } from '../routes';
import { session } from '../session';

/** Only a console page of this origin: never an address someone put in the link. */
const pageOrHome = (next: string) =>
  next.startsWith('/') && !next.startsWith('//') && consolePageOf(next) && consolePageOf(next) !== 'sign-in'
    ? next
    : '/';

const nextOfQuery = () => new URLSearchParams(window.location.search).get('next') ?? '';

async function begin(token: string, bySignIn: boolean, next = nextOfQuery()) {
  const who = await ok(api.GET('/v1/core/me/', { headers: { authorization: `Token ${token}` } }));
  session.start(token, who, { bySignIn });
  navigate(pageOrHome(next), { replace: true });
}

/**
 * What the identity provider's sign-in brought back in the fragment (the gateway's callback put
 * it there), removed from the address at once so the token stays out of the history.
 */
function takeFragment(): URLSearchParams | null {
  const fragment = new URLSearchParams(window.location.hash.slice(1));
  if (!fragment.has('token') && !fragment.has('error')) return null;
  window.history.replaceState(null, '', `${window.location.pathname}${window.location.search}`);
  return fragment;
}

export function SignInPage() {
  const [token, setToken] = useState('');
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [tokenError, setTokenError] = useState<unknown>(null);
  const [passwordError, setPasswordError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [providerError, setProviderError] = useState<unknown>(null);
  const [providerOn, setProviderOn] = useState(false);
  const ended = session.endedReason();

  useEffect(() => {
    const fragment = takeFragment();
    const token = fragment?.get('token');
    if (token) begin(token, true, fragment?.get('next') ?? '').catch(setProviderError);
    else if (fragment?.get('error')) setProviderError(new Error(fragment.get('error')!));
    ok(api.GET('/v1/core/auth/methods/'))
      .then((on) => setProviderOn(on.identity_provider))
      .catch(() => setProviderOn(false));
  }, []);
  const providerStart = `/v1/core/auth/oidc/login/?${new URLSearchParams({ return_to: pageOrHome(nextOfQuery()) }).toString()}`;

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
        {(providerOn || providerError !== null) && (
          <section aria-labelledby="provider-heading">
            <h2 id="provider-heading">With your organisation's sign-in</h2>
            <p>Signs you in through the identity provider (single sign-on) and brings you back here.</p>
            <ErrorNotice error={providerError} />
            <a class="button primary" href={providerStart}>
              Sign in through the identity provider
            </a>
          </section>
        )}
      </div>
      <p class="muted">The token is kept for this browser session only.</p>
    </main>
  );
}
