/**
 * The one error type for expected failures. Every code maps to exactly one HTTP
 * status (docs/errors.md); the error handler renders them, nothing else does.
 */
export const ERROR_STATUS = {
  invalid_request: 400,
  plan_restriction: 400,
  storage_test_failed: 400,
  url_not_allowed: 400,
  unauthorized: 401,
  quota_exceeded: 402,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  capture_rejected: 422,
  payload_too_large: 413,
  rate_limited: 429,
  internal_error: 500,
  target_unreachable: 502,
  target_error: 502,
  proxy_error: 502,
  storage_destination_error: 502,
  overloaded: 503,
  render_timeout: 504,
  storage_error: 500,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export interface AppErrorOptions {
  /** Extra fields rendered into the body beside `error` (e.g. the 402 and 429 shapes). */
  body?: Record<string, unknown>;
  /** Extra response headers (Retry-After, X-RateLimit-*). */
  headers?: Record<string, string>;
  /** Whether `code` is written into the body. 401/402/404/429 bodies are fixed (docs/errors.md). */
  exposeCode?: boolean;
  /**
   * The same request may well succeed a little later whatever the page does (another node's
   * render of it outlived this one's wait): an async job tries again instead of failing.
   */
  retryable?: boolean;
  /** Override the status for codes that allow two (storage_error: 500 or 503). */
  status?: number;
  cause?: unknown;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly body: Record<string, unknown> | undefined;
  readonly headers: Record<string, string> | undefined;
  readonly exposeCode: boolean;
  readonly retryable: boolean;

  constructor(code: ErrorCode, message: string, options: AppErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.status = options.status ?? ERROR_STATUS[code];
    this.body = options.body;
    this.headers = options.headers;
    this.exposeCode = options.exposeCode ?? (this.status === 400 || this.status >= 500);
    // A full render queue passes by itself.
    this.retryable = options.retryable ?? code === 'overloaded';
  }
}

export const isAppError = (err: unknown): err is AppError => err instanceof AppError;
