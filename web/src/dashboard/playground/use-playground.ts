import { type FormEvent, useEffect, useMemo, useRef, useState } from 'react';
import type { BatchQueued, BatchResult, CaptureResult } from '../../api/types.ts';
import { ApiError, apiCall } from '../../shared/api.ts';
import { captureBody, requestPath } from './capture-body.ts';
import { useOptionsForm } from './options-form.ts';

/** How often a running batch is read again, and for how long at most. */
const BATCH_POLL_MS = 1_500;
const BATCH_POLL_MAX_MS = 10 * 60_000;

export interface CaptureAnswer {
  body: CaptureResult;
  headers: Headers;
}

/**
 * The playground's state: the key, the options, and the capture they ask for, sent with the
 * key alone (never the session cookie) as any client would send it.
 */
export function usePlayground(initialKey: string) {
  const [key, setKey] = useState(initialKey);
  const form = useOptionsForm();
  const { options } = form;
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [result, setResult] = useState<CaptureAnswer | null>(null);
  const [batch, setBatch] = useState<BatchResult | null>(null);
  // The batch being followed: a newer run, or leaving the page, stops the last one's polling.
  const following = useRef<AbortController | null>(null);
  useEffect(() => () => following.current?.abort(), []);

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
