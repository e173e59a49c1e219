import { type FormEvent, useId, useRef, useState } from 'react';
import type { JsonBody, User } from '../api/types.ts';
import { ApiError, api } from '../shared/api.ts';
import { Link } from './router.tsx';
import { Notice, PageTitle } from './ui.tsx';

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const MIN_PASSWORD = 8;

type SignedIn = JsonBody<'/v1/auth/signup', 'post', 201> | JsonBody<'/v1/auth/login', 'post', 200>;

interface FieldErrors {
  email?: string;
  password?: string;
}

/** Sign up and log in: the same form, two endpoints, two sets of words. */
export function AuthPage({
  mode,
  notice,
  onSignedIn,
}: {
  mode: 'signup' | 'login';
  notice: string | null;
  onSignedIn: (user: User) => void;
}) {
  const signup = mode === 'signup';
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [errors, setErrors] = useState<FieldErrors>({});
  const [formError, setFormError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const emailRef = useRef<HTMLInputElement>(null);
  const passwordRef = useRef<HTMLInputElement>(null);
  const ids = { email: useId(), password: useId(), emailMsg: useId(), passwordMsg: useId() };

  function validate(): FieldErrors {
    const found: FieldErrors = {};
    if (email.trim() === '') found.email = 'Enter your email address.';
    else if (!EMAIL.test(email.trim()))
      found.email = 'Enter an email address like name@example.com.';
    if (password === '') found.password = 'Enter your password.';
    else if (signup && password.length < MIN_PASSWORD) {
      found.password = `Use at least ${MIN_PASSWORD} characters.`;
    }
    return found;
  }

  async function submit(event: FormEvent) {
    event.preventDefault();
    const found = validate();
    setErrors(found);
    setFormError(null);
    if (found.email || found.password) {
      (found.email ? emailRef : passwordRef).current?.focus();
      return;
    }
    setBusy(true);
    try {
      const { user } = await api<SignedIn>(signup ? '/v1/auth/signup' : '/v1/auth/login', {
        method: 'POST',
        body: { email: email.trim(), password },
        messages: signup
          ? { 409: 'An account with this email already exists. Log in instead.' }
          : { 401: 'Wrong email or password. Check both and try again.' },
      });
      onSignedIn(user);
    } catch (err) {
      setBusy(false);
      setFormError(err instanceof ApiError ? err.message : 'Something went wrong. Try again.');
      if (err instanceof ApiError && err.status === 401) passwordRef.current?.select();
    }
  }

  return (
    <div className="auth">
      <div className="auth-card">
        <a className="brand auth-brand" href="/">
          <span className="brand-mark" aria-hidden="true" />
          Shotsmith
        </a>
        <PageTitle title={signup ? 'Create your account' : 'Log in'}>
          {signup ? 'Create your account' : 'Log in'}
        </PageTitle>
        <p className="muted">
          {signup
            ? 'Free plan: 100 screenshots a month, no card needed.'
            : 'Welcome back. Log in to manage keys, usage and billing.'}
        </p>
        {notice && <Notice tone="info">{notice}</Notice>}
        <form onSubmit={submit} noValidate className="stack">
          <div className="field">
            <label htmlFor={ids.email}>Email</label>
            <input
              ref={emailRef}
              id={ids.email}
              className="input"
              type="email"
              name="email"
              autoComplete={signup ? 'email' : 'username'}
              value={email}
              onChange={(e) => setEmail(e.target.value)}
              aria-invalid={errors.email ? true : undefined}
              aria-describedby={errors.email ? ids.emailMsg : undefined}
            />
            {errors.email && (
              <p id={ids.emailMsg} className="field-error">
                {errors.email}
              </p>
            )}
          </div>
          <div className="field">
            <label htmlFor={ids.password}>Password</label>
            <input
              ref={passwordRef}
              id={ids.password}
              className="input"
              type="password"
              name="password"
              autoComplete={signup ? 'new-password' : 'current-password'}
              value={password}
              onChange={(e) => setPassword(e.target.value)}
              aria-invalid={errors.password ? true : undefined}
              aria-describedby={errors.password || signup ? ids.passwordMsg : undefined}
            />
            {(errors.password || signup) && (
              <p id={ids.passwordMsg} className={errors.password ? 'field-error' : 'field-hint'}>
                {errors.password ?? `At least ${MIN_PASSWORD} characters. A passphrase is best.`}
              </p>
            )}
          </div>
          <div role="alert" className="form-alert">
            {formError && (
              <Notice tone="error" live="none">
                {formError}
              </Notice>
            )}
          </div>
          <button type="submit" className="btn btn-primary btn-block" disabled={busy}>
            {busy
              ? signup
                ? 'Creating account…'
                : 'Logging in…'
              : signup
                ? 'Create account'
                : 'Log in'}
          </button>
        </form>
        <p className="auth-switch">
          {signup ? (
            <>
              Already have an account? <Link to="/dashboard/login">Log in</Link>
            </>
          ) : (
            <>
              New to Shotsmith? <Link to="/dashboard/signup">Create an account</Link>
            </>
          )}
        </p>
      </div>
    </div>
  );
}
