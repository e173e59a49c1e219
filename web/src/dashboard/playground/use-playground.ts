import { type FormEvent, useMemo, useState } from 'react';
import type { CaptureResult } from '../../api/types.ts';
import { ApiError, apiCall } from '../../shared/api.ts';
import { captureBody, DEFAULT_OPTIONS, type Options } from './capture-body.ts';

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

  const set = <K extends keyof Options>(name: K, value: Options[K]) =>
    setOptions((o) => ({ ...o, [name]: value }));
  const form: OptionsForm = {
    options,
    set,
    text: (name) => ({ value: options[name], onValueChange: (value) => set(name, value) }),
    flag: (name) => ({ checked: options[name], onCheckedChange: (checked) => set(name, checked) }),
  };
  const body = useMemo(() => captureBody(options), [options]);
  const trimmedKey = key.trim();

  async function run(event: FormEvent) {
    event.preventDefault();
    if (!trimmedKey) {
      setError('Paste an API key first, or create one on the API keys page.');
      return;
    }
    setBusy(true);
    setError(null);
    try {
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

  return { key, setKey, trimmedKey, form, body, busy, error, result, run };
}
