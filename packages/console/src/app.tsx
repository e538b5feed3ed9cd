/**
 * The console's frame: sign-in until there is a session, then the Global Banner, the navigation
 * of the role, the page and the Feedback link.
 */
import { useEffect, useState } from 'preact/hooks';
import { api, ok } from './api/client';
import { Link } from './components/ui';
import { AI_PAGES, homeFor, pagesFor, pageTitle, roleHasPage } from './nav';
import { DashboardPage } from './pages/dashboard';
import { ModelsPage } from './pages/models';
import { ProcessorsPage } from './pages/processors';
import { PipelinesPage } from './pages/pipelines';
import { ChangeInstancesPage } from './pages/change-instances';
import { WebhooksPage } from './pages/webhooks';
import { SettingsPage } from './pages/settings';
import { SignInPage } from './pages/sign-in';
import { navigate, useLocation } from './router';
import { consolePageOf, type ConsolePage } from './routes';
import { session } from './session';
import { refreshSettings, startSettings, stopSettings, useSettings } from './settings-store';

const PAGES: Record<Exclude<ConsolePage, 'sign-in'>, (props: { path: string }) => preact.JSX.Element> = {
  dashboard: DashboardPage,
  models: ModelsPage,
  processors: ProcessorsPage,
  pipelines: PipelinesPage,
  'change-instances': ChangeInstancesPage,
  webhooks: WebhooksPage,
  settings: SettingsPage,
};

function useSession() {
  const [, setVersion] = useState(0);
  useEffect(() => {
    const update = () => setVersion((version) => version + 1);
    update();
    return session.subscribe(update);
  }, []);
  return session.me();
}

export function App() {
  const me = useSession();
  const location = useLocation();
  const [resuming, setResuming] = useState(() => session.token() !== null && session.me() === null);

  // A reload keeps the token (sessionStorage): find out again whose it is.
  useEffect(() => {
    if (!resuming) return;
    const token = session.token()!;
    ok(api.GET('/v1/core/me/'))
      .then((who) => session.start(token, who))
      .catch(() => session.end('Your session ended: the token was refused or has expired.'))
      .finally(() => setResuming(false));
  }, [resuming]);

  useEffect(() => {
    if (me) startSettings();
    else stopSettings();
  }, [me]);
  useEffect(() => {
    if (me) void refreshSettings();
  }, [me, location.path]);

  if (resuming) return <p role="status">Signing in…</p>;
  if (!me) {
    if (consolePageOf(location.path) !== 'sign-in') {
      const next =
        location.path === '/' ? '' : `?next=${encodeURIComponent(location.path + window.location.search)}`;
      navigate(`/sign-in${next}`, { replace: true });
    }
    return <SignInPage />;
  }
  return <Shell path={location.path} />;
}

function Shell({ path }: { path: string }) {
  const me = session.me()!;
  const { settings, error } = useSettings();
  const pages = pagesFor(me.role, settings);
  const page = consolePageOf(path);
  // Home depends on the settings (is the dashboard shown?): wait for them, unless they failed.
  const settled = settings !== null || error !== null;
  useEffect(() => {
    if (settled && (!page || page === 'sign-in')) navigate(homeFor(me.role, settings), { replace: true });
  }, [page, me.role, settings, settled]);
  useEffect(() => {
    document.title = page && page !== 'sign-in' ? `${pageTitle(page)} · Pack console` : 'Pack console';
  }, [page]);
  const signOut = async () => {
    // A token from the password sign-in lives for this session only: revoke it. A token an
    // admin issued may be in use elsewhere (scripts, CI): the console only forgets it.
    if (session.issuedBySignIn()) await ok(api.POST('/v1/core/auth/logout/')).catch(() => undefined);
    session.end();
    navigate('/sign-in');
  };
  const Page = page && page !== 'sign-in' ? PAGES[page] : undefined;
  const allowed =
    page !== undefined &&
    page !== 'sign-in' &&
    (pages.includes(page) || (AI_PAGES.includes(page) && !settings));
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      {settings?.global_banner.ENABLED && settings.global_banner.message && (
        <div class="banner" role="region" aria-label="Announcement" data-testid="global-banner">
          {settings.global_banner.message}
        </div>
      )}
      <header class="top">
        <Link href="/" class="brand">
          Pack console
        </Link>
        <nav aria-label="Main">
          <ul>
            {pages.map((item) => (
              <li key={item}>
                <Link href={`/${item}`} aria-current={item === page ? 'page' : undefined}>
                  {pageTitle(item)}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <div class="who">
          <span>
            {me.username} <span class="muted">({me.role.replace('_', ' ')})</span>
          </span>
          <button type="button" onClick={() => void signOut()}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        {error && !settings ? (
          <div class="notice notice-error" role="alert">
            The general settings could not be read: {(error as Error).message}
          </div>
        ) : null}
        {Page && allowed ? (
          <Page path={path} />
        ) : Page && page && roleHasPage(me.role, page) ? (
          <p>This page is turned off in the general settings (AI Integration).</p>
        ) : Page ? (
          <p>This page is not available to your role.</p>
        ) : null}
      </main>
      <footer class="bottom">
        {settings?.feedback.ENABLED && settings.feedback.feedback_link && (
          <a href={settings.feedback.feedback_link} rel="noopener noreferrer" target="_blank">
            Feedback
          </a>
        )}
        <a href="/v1/docs/">API reference</a>
      </footer>
    </>
  );
}
