import { type FormEvent, type ReactNode, useEffect, useId, useRef, useState } from 'react';
import type { DemoResult } from '../api/types.ts';
import { ApiError, api } from '../shared/api.ts';
import { formatDateTime, formatRelative, normalizeUrl, shortUrl } from '../shared/format.ts';

type State =
  | { kind: 'idle' }
  | { kind: 'rendering'; url: string; startedAt: number }
  | { kind: 'done'; url: string; result: DemoResult; seconds: number }
  | { kind: 'error'; message: string }
  | { kind: 'limit'; resetsAt: string; limit: number; daily: boolean };

/**
 * The landing page demo: one URL, a fixed 1280×720 PNG. The frame has its size from the
 * first paint and progress is drawn inside it, so nothing moves while a capture renders or
 * when the image arrives.
 */
export function DemoWidget() {
  const [url, setUrl] = useState('');
  const [state, setState] = useState<State>({ kind: 'idle' });
  const [shown, setShown] = useState<{ url: string; result: DemoResult } | null>(null);
  const [inputError, setInputError] = useState<string | null>(null);
  const inputRef = useRef<HTMLInputElement>(null);
  const inputId = useId();
  const hintId = useId();
  const errorId = useId();
  const busy = state.kind === 'rendering';
  const elapsed = useElapsed(state.kind === 'rendering' ? state.startedAt : null);

  async function submit(event: FormEvent) {
    event.preventDefault();
    const target = normalizeUrl(url);
    if (target === '') {
      setInputError('Enter the address of a page to capture, for example example.com.');
      inputRef.current?.focus();
      return;
    }
    setInputError(null);
    setState({ kind: 'rendering', url: target, startedAt: Date.now() });
    const startedAt = performance.now();
    try {
      const result = await api<DemoResult>('/demo/screenshot', {
        method: 'POST',
        body: { url: target },
        credentials: 'omit',
      });
      const seconds = (performance.now() - startedAt) / 1000;
      setState({ kind: 'done', url: target, result, seconds });
      setShown({ url: target, result });
    } catch (err) {
      if (err instanceof ApiError && err.status === 429 && err.body.plan === 'demo') {
        const resetTime = err.body.reset_time ?? 0;
        setState({
          kind: 'limit',
          resetsAt: new Date(resetTime * 1000).toISOString(),
          limit: err.body.limit ?? 5,
          // The daily allowance resets at UTC midnight; the hourly request budget does not.
          daily: resetTime % 86_400 === 0,
        });
      } else {
        setState({
          kind: 'error',
          message: err instanceof Error ? err.message : 'The capture failed. Please try again.',
        });
      }
    }
  }

  // Spoken by screen readers: each step once (the ticking seconds are only drawn).
  const announcement =
    state.kind === 'rendering'
      ? `Rendering ${shortUrl(state.url)}…`
      : state.kind === 'done'
        ? `Screenshot of ${shortUrl(state.url)} ready.`
        : '';
  let problem: ReactNode = null;
  if (state.kind === 'error') problem = state.message;
  if (state.kind === 'limit') {
    problem = (
      <>
        {state.daily
          ? `You have used today's ${state.limit} demo captures.`
          : `The demo allows ${state.limit} requests an hour.`}{' '}
        The demo resets {formatRelative(state.resetsAt)} ({formatDateTime(state.resetsAt)}).{' '}
        <a href="/dashboard/signup">Create a free account</a> for 100 captures a month.
      </>
    );
  }

  return (
    <div className="demo">
      <form className="demo-form" onSubmit={submit} noValidate>
        <div className="field">
          <label htmlFor={inputId}>Page to capture</label>
          <div className="input-row">
            <input
              ref={inputRef}
              id={inputId}
              className="input"
              type="text"
              inputMode="url"
              autoComplete="url"
              spellCheck={false}
              placeholder="example.com"
              value={url}
              onChange={(e) => setUrl(e.target.value)}
              aria-invalid={inputError ? true : undefined}
              aria-describedby={inputError ? errorId : hintId}
            />
            <button type="submit" className="btn btn-primary" disabled={busy}>
              {busy ? 'Capturing…' : 'Capture'}
            </button>
          </div>
          {inputError ? (
            <p id={errorId} className="field-error">
              {inputError}
            </p>
          ) : (
            <p id={hintId} className="field-hint">
              A public http or https address. The result is a 1280×720 PNG kept for 24 hours.
            </p>
          )}
        </div>
      </form>

      <p role="status" className="visually-hidden">
        {announcement}
      </p>
      <div role="alert" className="demo-alert">
        {problem && (
          <div className={`notice tone-${state.kind === 'limit' ? 'warning' : 'error'}`}>
            <div className="notice-body">{problem}</div>
          </div>
        )}
      </div>

      <figure className="demo-frame" aria-busy={busy}>
        {shown ? (
          <img
            src={shown.result.image_url}
            alt={`Screenshot of ${shortUrl(shown.url)}`}
            width={1280}
            height={720}
            className={busy ? 'demo-image is-stale' : 'demo-image'}
          />
        ) : (
          !busy && (
            <div className="demo-placeholder" aria-hidden="true">
              Your screenshot appears here
            </div>
          )
        )}
        {state.kind === 'rendering' && (
          <div className="demo-progress" aria-hidden="true">
            <div className="demo-shimmer" />
            <p className="demo-progress-text">
              <span className="spinner" /> Rendering {shortUrl(state.url)}…{' '}
              <span className="muted">{elapsed} s</span>
            </p>
          </div>
        )}
      </figure>
      <p className="demo-caption">
        {shown && state.kind !== 'rendering' ? (
          <>
            {state.kind === 'done' && shown.result === state.result
              ? `${shown.result.cached ? 'From the cache' : `Rendered in ${state.seconds.toFixed(1)} s`} · `
              : ''}
            <a href={shown.result.image_url} target="_blank" rel="noreferrer">
              Open the full-size image
            </a>{' '}
            · kept until {formatDateTime(shown.result.expires_at)}
          </>
        ) : (
          '\u00a0'
        )}
      </p>
    </div>
  );
}

/** Whole seconds since `startedAt`, ticking while it is set. */
function useElapsed(startedAt: number | null): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (startedAt === null) return;
    setNow(Date.now());
    const timer = window.setInterval(() => setNow(Date.now()), 250);
    return () => window.clearInterval(timer);
  }, [startedAt]);
  return startedAt === null ? 0 : Math.max(0, Math.floor((now - startedAt) / 1000));
}
