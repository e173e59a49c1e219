import type { ErrorBody } from '../api/types.ts';
import { formatDateTime, formatRelative } from './format.ts';

/** Same origin by default; a dashboard hosted elsewhere is built with VITE_API_BASE. */
export const API_BASE = (import.meta.env.VITE_API_BASE ?? '').replace(/\/+$/, '');

/** The origin API calls go to, for display (curl examples). */
export const apiOrigin = (): string => API_BASE || window.location.origin;

/** A failed call, with a message written for people (never a status code or error code). */
export class ApiError extends Error {
  readonly status: number;
  readonly body: ErrorBody;

  constructor(status: number, body: ErrorBody, message: string) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.body = body;
  }
}

export interface RequestOptions {
  method?: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  body?: unknown;
  headers?: Record<string, string>;
  /** `include` (default) sends the session cookie, also to an API on another origin. */
  credentials?: RequestCredentials;
  signal?: AbortSignal;
  /** Words for statuses whose generic text would mislead here (401 on the login form). */
  messages?: Partial<Record<number, string>>;
}

export interface ApiResponse<T> {
  data: T;
  headers: Headers;
}

export async function apiCall<T>(
  path: string,
  options: RequestOptions = {},
): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.body !== undefined) headers['Content-Type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(`${API_BASE}${path}`, {
      method: options.method ?? 'GET',
      credentials: options.credentials ?? 'include',
      headers,
      body: options.body === undefined ? null : JSON.stringify(options.body),
      signal: options.signal ?? null,
    });
  } catch (err) {
    if (err instanceof DOMException && err.name === 'AbortError') throw err;
    throw new ApiError(0, {}, describeError(0, {}, null));
  }
  const text = await res.text();
  let parsed: unknown = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = null;
  }
  if (!res.ok) {
    const body = (parsed && typeof parsed === 'object' ? parsed : {}) as ErrorBody;
    const retryAfter = Number(res.headers.get('Retry-After')) || null;
    const message = options.messages?.[res.status] ?? describeError(res.status, body, retryAfter);
    throw new ApiError(res.status, body, message);
  }
  return { data: parsed as T, headers: res.headers };
}

export async function api<T>(path: string, options: RequestOptions = {}): Promise<T> {
  return (await apiCall<T>(path, options)).data;
}

/** An error answer in words: the API's own message where it is one, a sentence otherwise. */
export function describeError(status: number, body: ErrorBody, retryAfter: number | null): string {
  if (status === 0) return 'Could not reach the service. Check your connection and try again.';
  if (status === 401) return 'You are signed out. Please log in again.';
  if (status === 402) {
    const resets = body.resets_at ? ` It resets on ${formatDateTime(body.resets_at)}.` : '';
    return `This month's quota is used up (${body.used ?? '?'} of ${body.limit ?? '?'} captures).${resets}`;
  }
  if (status === 403) {
    return 'The service refused this request because it did not come from a trusted dashboard page. Reload the page and try again.';
  }
  if (status === 413) return 'The request is too large.';
  if (status === 429) {
    const when =
      body.reset_time !== undefined
        ? ` You can try again ${formatRelative(new Date(body.reset_time * 1000).toISOString())}.`
        : retryAfter
          ? ` You can try again in ${retryAfter} seconds.`
          : '';
    return `${sentence(body.message ?? body.error ?? 'Too many requests.')}${when}`;
  }
  if (status === 503) {
    return `The service is busy right now. Try again ${retryAfter ? `in ${retryAfter} seconds` : 'in a moment'}.`;
  }
  if (status === 504) return 'The page took too long to render. Try again, or try a lighter page.';
  if (status === 502) return sentence(body.error ?? 'The page could not be reached.');
  if (status >= 500) return 'Something went wrong on our side. Please try again in a moment.';
  if (body.code === 'url_not_allowed') {
    return `This address cannot be captured: ${body.error ?? 'it is not a public web page'}. Only public web pages can be captured.`;
  }
  if (body.code === 'plan_restriction') {
    return `${sentence(body.error ?? 'That option is not available on your plan.')} Upgrade to Pro to use it.`;
  }
  return sentence(body.error ?? 'The request failed.');
}

/** "url must not be empty" -> "Url must not be empty." */
export function sentence(text: string): string {
  const trimmed = text.trim();
  if (trimmed === '') return trimmed;
  const first = trimmed.charAt(0).toUpperCase() + trimmed.slice(1);
  return /[.!?]$/.test(first) ? first : `${first}.`;
}
