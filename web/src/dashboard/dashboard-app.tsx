import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import type { JsonBody, User } from '../api/types.ts';
import { ApiError, api, type RequestOptions } from '../shared/api.ts';
import { planLabel } from '../shared/format.ts';
import { AuthPage } from './auth-page.tsx';
import { BillingPage } from './billing-page.tsx';
import { type BillingReturn, BillingReturnNotice, takeBillingReturn } from './billing-return.tsx';
import { KeysPage } from './keys-page.tsx';
import { MonitorsPage } from './monitors-page.tsx';
import { OverviewPage } from './overview-page.tsx';
import { PlaygroundPage } from './playground-page.tsx';
import { Link, navigate, usePath } from './router.tsx';
import { ScreenshotsPage } from './screenshots-page.tsx';
import { type Session, SessionContext } from './session.tsx';
import { StoragePage } from './storage-page.tsx';
import { Notice, PageTitle } from './ui.tsx';
import { WebhooksPage } from './webhooks-page.tsx';

type Me = JsonBody<'/v1/auth/me', 'get', 200>;

type Auth =
  | { status: 'loading' }
  | { status: 'signed-out'; notice: string | null }
  | { status: 'signed-in'; user: User };

const PAGES = [
  { path: '/dashboard', label: 'Overview', Page: OverviewPage },
  { path: '/dashboard/keys', label: 'API keys', Page: KeysPage },
  { path: '/dashboard/playground', label: 'Playground', Page: PlaygroundPage },
  { path: '/dashboard/screenshots', label: 'Screenshots', Page: ScreenshotsPage },
  { path: '/dashboard/monitors', label: 'Monitors', Page: MonitorsPage },
  { path: '/dashboard/storage', label: 'Storage', Page: StoragePage },
  { path: '/dashboard/webhooks', label: 'Webhooks', Page: WebhooksPage },
  { path: '/dashboard/billing', label: 'Billing', Page: BillingPage },
];
const PUBLIC_PATHS = new Set(['/dashboard/login', '/dashboard/signup']);

export function DashboardApp() {
  const path = usePath();
  const [auth, setAuth] = useState<Auth>({ status: 'loading' });
  const [createdKeys, setCreatedKeys] = useState<Record<number, string>>({});
  const [billingReturn, setBillingReturn] = useState<BillingReturn | null>(takeBillingReturn);
  // Where a signed-out visitor was going, to continue there after logging in.
  const returnTo = useRef<string | null>(null);

  useEffect(() => {
    api<Me>('/v1/auth/me').then(
      ({ user }) => setAuth({ status: 'signed-in', user }),
      (err: unknown) =>
        setAuth({
          status: 'signed-out',
          notice: err instanceof ApiError && err.status !== 401 ? err.message : null,
        }),
    );
  }, []);

  const isPublic = PUBLIC_PATHS.has(path);
  useEffect(() => {
    if (auth.status === 'signed-out' && !isPublic) {
      if (path !== '/dashboard') returnTo.current = path;
      navigate('/dashboard/login', { replace: true, focus: false });
    } else if (auth.status === 'signed-in' && isPublic) {
      navigate('/dashboard', { replace: true, focus: false });
    }
  }, [auth.status, isPublic, path]);

  const signOut = useCallback((notice: string | null) => {
    returnTo.current = window.location.pathname;
    setAuth({ status: 'signed-out', notice });
  }, []);

  const signedIn = useCallback((user: User) => {
    const target = returnTo.current ?? '/dashboard';
    returnTo.current = null;
    navigate(target);
    setAuth({ status: 'signed-in', user });
  }, []);

  const user = auth.status === 'signed-in' ? auth.user : null;
  const session = useMemo<Session | null>(() => {
    if (!user) return null;
    return {
      user,
      async call<T>(p: string, options?: RequestOptions): Promise<T> {
        try {
          return await api<T>(p, options);
        } catch (err) {
          if (err instanceof ApiError && err.status === 401) {
            signOut('Your session has ended. Please log in again.');
          }
          throw err;
        }
      },
      async refreshUser() {
        try {
          const { user: fresh } = await api<Me>('/v1/auth/me');
          setAuth({ status: 'signed-in', user: fresh });
          return fresh;
        } catch (err) {
          if (err instanceof ApiError && err.status === 401) signOut(null);
          return null;
        }
      },
      createdKeys,
      rememberKey: (id: number, key: string) => setCreatedKeys((keys) => ({ ...keys, [id]: key })),
    };
  }, [user, createdKeys, signOut]);

  if (auth.status === 'loading') {
    return (
      <div className="app-loading" aria-busy="true">
        <span className="spinner spinner-delayed" aria-hidden="true" />
        <span className="visually-hidden" role="status">
          Loading the dashboard…
        </span>
      </div>
    );
  }

  if (!session) {
    const notice = auth.status === 'signed-out' ? auth.notice : null;
    return (
      <main id="main">
        <AuthPage
          key={path}
          mode={path === '/dashboard/signup' ? 'signup' : 'login'}
          notice={notice}
          onSignedIn={signedIn}
        />
      </main>
    );
  }

  async function logOut() {
    try {
      await api('/v1/auth/logout', { method: 'POST' });
    } catch {
      // Signed out already, or unreachable: either way this tab forgets the session.
    }
    setCreatedKeys({});
    returnTo.current = null;
    setAuth({ status: 'signed-out', notice: 'You are logged out.' });
    navigate('/dashboard/login');
  }

  const page = PAGES.find((p) => p.path === path);
  return (
    <SessionContext.Provider value={session}>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="app-header">
        <div className="container app-header-top">
          <a className="brand" href="/">
            <span className="brand-mark" aria-hidden="true" />
            Shotsmith
          </a>
          <div className="account">
            <span className="account-email" title={session.user.email}>
              {session.user.email}
            </span>
            <span className={`badge badge-${session.user.plan}`}>
              {planLabel(session.user.plan)}
              <span className="visually-hidden"> plan</span>
            </span>
            <button type="button" className="btn btn-secondary btn-small" onClick={logOut}>
              Log out
            </button>
          </div>
        </div>
        <nav className="container app-nav" aria-label="Dashboard">
          {PAGES.map((p) => (
            <Link key={p.path} to={p.path} aria-current={p.path === path ? 'page' : undefined}>
              {p.label}
            </Link>
          ))}
        </nav>
      </header>
      <main id="main" className="container app-main" tabIndex={-1}>
        {billingReturn && (
          <BillingReturnNotice outcome={billingReturn} onDismiss={() => setBillingReturn(null)} />
        )}
        {page ? <page.Page /> : <NotFound />}
      </main>
    </SessionContext.Provider>
  );
}

function NotFound() {
  return (
    <>
      <PageTitle title="Page not found">Page not found</PageTitle>
      <Notice tone="warning" live="none">
        There is no dashboard page at this address. <Link to="/dashboard">Go to the overview</Link>.
      </Notice>
    </>
  );
}
