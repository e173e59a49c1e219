import { type FormEvent, useEffect, useMemo, useRef, useState } from 'react';
import type { BatchQueued, BatchResult, CaptureResult } from '../../api/types.ts';
import { ApiError, apiCall } from '../../shared/api.ts';
import { captureBody, DEFAULT_OPTIONS, type Options, requestPath } from './capture-body.ts';

/** How often a running batch is read again, and for how long at most. */
const BATCH_POLL_MS = 1_500;
const BATCH_POLL_MAX_MS = 10 * 60_000;

/**
 * The playground's state: the key, the options, and the capture they ask for, sent with the
 * key alone (never the session cookie) as any client would send it.
 */

type OptionOf<T> = { [K in keyof Options]: Options[K] extends T ? K : never }[keyof Options];

/** What the form's parts need: the options and the ways to change them. */
export interface OptionsForm {
  options: Options;
  set<K extends keyof Options>(name: K, value: Options[K]): void;
  /** Value and change handler of a text option, for InputField and TextAreaField. */
  text(name: OptionOf<string>): { value: string; onValueChange(value: string): void };
  /** Checked state and change handler of a yes/no option, for Check. */
  flag(name: OptionOf<boolean>): { checked: boolean; onCheckedChange(checked: boolean): void };
}

export interface CaptureAnswer {
  body: CaptureResult;
  headers: Headers;
}

export function usePlayground(initialKey: string) {
  const [key, setKey] = useState(initialKey);
  const [options, setOptions] = useState<Options>(DEFAULT_OPTIONS);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [result, setResult] = useState<CaptureAnswer | null>(null);
  const [batch, setBatch] = useState<BatchResult | null>(null);
  // The batch being followed: a newer run, or leaving the page, stops the last one's polling.
  const following = useRef<AbortController | null>(null);
  useEffect(() => () => following.current?.abort(), []);

  const set = <K extends keyof Options>(name: K, value: Options[K]) =>
    setOptions((o) => ({ ...o, [name]: value }));
  const form: OptionsForm = {
    options,
    set,
    text: (name) => ({ value: options[name], onValueChange: (value) => set(name, value) }),
    flag: (name) => ({ checked: options[name], onCheckedChange: (checked) => set(name, checked) }),
  };
  const body = useMemo(() => captureBody(options), [options]);
  const path = requestPath(options);
  const trimmedKey = key.trim();

  /** Reads the batch until every job has ended (or the page stops following it). */
  async function follow(id: string, signal: AbortSignal) {
    const until = Date.now() + BATCH_POLL_MAX_MS;
    while (!signal.aborted && Date.now() < until) {
      const res = await apiCall<BatchResult>(`/v1/screenshots/batch/${encodeURIComponent(id)}`, {
        headers: { 'X-API-Key': trimmedKey },
        credentials: 'omit',
        signal,
      });
      if (signal.aborted) return;
      setBatch(res.data);
      if (res.data.status === 'completed') return;
      await new Promise((resolve) => setTimeout(resolve, BATCH_POLL_MS));
    }
  }

  async function run(event: FormEvent) {
    event.preventDefault();
    if (!trimmedKey) {
      setError('Paste an API key first, or create one on the API keys page.');
      return;
    }
    setBusy(true);
    setError(null);
    following.current?.abort();
    try {
      if (path !== '/v1/screenshots') {
        const queued = await apiCall<BatchQueued>(path, {
          method: 'POST',
          body,
          headers: { 'X-API-Key': trimmedKey },
          credentials: 'omit',
        });
        setResult(null);
        const controller = new AbortController();
        following.current = controller;
        // Followed in the background: the form is free again once the batch is queued.
        follow(queued.data.batch_id, controller.signal).catch((err: unknown) => {
          if (controller.signal.aborted) return;
          setError(err instanceof ApiError ? err.message : 'The batch could not be read.');
        });
        return;
      }
      setBatch(null);
      const res = await apiCall<CaptureResult>('/v1/screenshots', {
        method: 'POST',
        body,
        headers: { 'X-API-Key': trimmedKey },
        credentials: 'omit',
        messages: {
          401: 'The API key was refused: it is mistyped, or it has been revoked. Create a new key on the API keys page.',
        },
      });
      setResult({ body: res.data, headers: res.headers });
    } catch (err) {
      setError(err instanceof ApiError ? err.message : 'The capture failed. Try again.');
    } finally {
      setBusy(false);
    }
  }

  return { key, setKey, trimmedKey, form, body, path, busy, error, result, batch, run };
}
