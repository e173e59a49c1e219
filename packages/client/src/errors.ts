/**
 * Every refusal of the API as one typed error: the HTTP status, the stable `code`, the
 * message, and the fields some answers carry (402: `resetsAt`; 429: `resetTime`,
 * `retryAfter`). A request that never got an answer is a `ShotsmithError` with status 0 and
 * code `network_error`.
 */
export type ErrorCode =
  | 'invalid_request'
  | 'plan_restriction'
  | 'url_not_allowed'
  | 'unauthorized'
  | 'quota_exceeded'
  | 'forbidden'
  | 'not_found'
  | 'method_not_allowed'
  | 'conflict'
  | 'payload_too_large'
  | 'rate_limited'
  | 'internal_error'
  | 'target_unreachable'
  | 'target_error'
  | 'proxy_error'
  | 'overloaded'
  | 'render_timeout'
  | 'storage_error'
  | 'storage_test_failed'
  | 'storage_destination_error'
  | 'network_error'
  | 'unexpected_redirect'
  | (string & {});

/** The code of an answer whose body names none (401, 402, 404, 429 bodies are fixed). */
const CODE_BY_STATUS: Record<number, ErrorCode> = {
  400: 'invalid_request',
  401: 'unauthorized',
  402: 'quota_exceeded',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  409: 'conflict',
  413: 'payload_too_large',
  429: 'rate_limited',
  500: 'internal_error',
  502: 'target_unreachable',
  503: 'overloaded',
  504: 'render_timeout',
};

export class ShotsmithError extends Error {
  readonly status: number;
  readonly code: ErrorCode;
  /** The answer's JSON body, as sent. */
  readonly body: Record<string, unknown>;
  /** Seconds to wait before retrying (the `Retry-After` header), when the answer gave one. */
  readonly retryAfter: number | null;
  /** 402: when the monthly quota resets (ISO 8601). */
  readonly resetsAt: string | null;
  /** 429: when the rate window resets (Unix seconds). */
  readonly resetTime: number | null;

  constructor(options: {
    status: number;
    code: ErrorCode;
    message: string;
    body?: Record<string, unknown>;
    retryAfter?: number | null;
  }) {
    super(options.message);
    this.name = 'ShotsmithError';
    this.status = options.status;
    this.code = options.code;
    this.body = options.body ?? {};
    this.retryAfter = options.retryAfter ?? null;
    this.resetsAt = typeof this.body.resets_at === 'string' ? this.body.resets_at : null;
    this.resetTime = typeof this.body.reset_time === 'number' ? this.body.reset_time : null;
  }

  /** The error an HTTP answer that is not a success stands for. */
  static async fromResponse(res: Response): Promise<ShotsmithError> {
    const text = await res.text().catch(() => '');
    let body: Record<string, unknown> = {};
    try {
      const parsed: unknown = JSON.parse(text);
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) {
        body = parsed as Record<string, unknown>;
      }
    } catch {
      // Not JSON (a proxy's page): the status says enough.
    }
    const retry = Number(res.headers.get('retry-after'));
    const message =
      typeof body.message === 'string'
        ? body.message
        : typeof body.error === 'string'
          ? body.error
          : `HTTP ${res.status}`;
    return new ShotsmithError({
      status: res.status,
      code:
        typeof body.code === 'string'
          ? body.code
          : (CODE_BY_STATUS[res.status] ??
            (res.status >= 500 ? 'internal_error' : 'invalid_request')),
      message,
      body,
      retryAfter: res.headers.has('retry-after') && Number.isFinite(retry) ? retry : null,
    });
  }
}
