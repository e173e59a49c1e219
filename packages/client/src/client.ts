import { ShotsmithError } from './errors.ts';
import { type LinkOptionValue, renderLink } from './links.ts';
import type {
  BatchStatus,
  CapturedImage,
  CaptureOptions,
  CaptureResult,
  Devices,
  Monitor,
  MonitorList,
  MonitorRequest,
  MonitorRunList,
  MonitorRunStarted,
  MonitorUpdate,
  Plans,
  Proxies,
  QueuedBatch,
  QueuedJob,
  ScreenshotList,
  ScreenshotStatus,
  StorageDestination,
  StorageDestinationList,
  StorageDestinationRequest,
  Usage,
} from './types.ts';

export interface ShotsmithOptions {
  /** An API key (`sk_live_...`). */
  apiKey: string;
  /** The service's origin, e.g. `https://shots.example.com`. */
  baseUrl: string;
  /** Retries of a 429 or 503 answer, each after its `Retry-After`. Default 3. */
  maxRetries?: number;
  /** The longest `Retry-After` waited for; a longer one is thrown at once. Default 60 s. */
  maxRetryDelayMs?: number;
  /** Gives up on a request (each attempt) after this long. Default 120 s. */
  timeoutMs?: number;
  /** A fetch of your own (tests, proxies). Default the global one. */
  fetch?: typeof fetch;
}

export interface WaitOptions {
  /** Between status reads. Default 500 ms. */
  intervalMs?: number;
  /** Gives up after this long (a ShotsmithError with code `timeout`). Default 5 minutes. */
  timeoutMs?: number;
  /** Told each status read, for a progress line. */
  onStatus?: (status: ScreenshotStatus) => void;
  signal?: AbortSignal;
}

/** A page of a listing: at most `limit` items, after the `cursor` the previous page gave. */
export interface PageOptions {
  limit?: number;
  cursor?: string;
}

const RETRIED = new Set([429, 503]);
const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });

/**
 * The Shotsmith API from TypeScript: every programmatic endpoint, typed from the service's
 * OpenAPI document. Refusals are `ShotsmithError`s; a 429 or 503 is retried after its
 * `Retry-After` (up to `maxRetries`, never waiting longer than `maxRetryDelayMs`).
 */
export class Shotsmith {
  readonly baseUrl: string;
  readonly #apiKey: string;
  readonly #fetch: typeof fetch;
  readonly #maxRetries: number;
  readonly #maxRetryDelayMs: number;
  readonly #timeoutMs: number;

  constructor(options: ShotsmithOptions) {
    if (!options.apiKey) throw new TypeError('apiKey is required');
    if (!/^https?:\/\//.test(options.baseUrl ?? '')) {
      throw new TypeError('baseUrl must be an http(s) URL, e.g. https://shots.example.com');
    }
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.#apiKey = options.apiKey;
    this.#fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.#maxRetries = options.maxRetries ?? 3;
    this.#maxRetryDelayMs = options.maxRetryDelayMs ?? 60_000;
    this.#timeoutMs = options.timeoutMs ?? 120_000;
  }

  /** POST /v1/screenshots: renders (or answers from the cache) and returns the image's URL. */
  async capture(options: CaptureOptions): Promise<CaptureResult> {
    const res = await this.#request('POST', '/v1/screenshots', options);
    return (await res.json()) as CaptureResult;
  }

  /** The same capture with the image bytes in one round trip (`response_type: "image"`). */
  async captureImage(options: CaptureOptions): Promise<CapturedImage> {
    const res = await this.#request('POST', '/v1/screenshots', {
      ...options,
      response_type: 'image',
    });
    const h = res.headers;
    const id = h.get('x-screenshot-id');
    return {
      bytes: new Uint8Array(await res.arrayBuffer()),
      contentType: h.get('content-type') ?? 'application/octet-stream',
      imageUrl: h.get('x-image-url') ?? '',
      expiresAt: h.get('x-expires-at') ?? '',
      cached: h.get('x-cached') === 'true',
      quota: { used: Number(h.get('x-quota-used')), limit: Number(h.get('x-quota-limit')) },
      screenshotId: id === null ? null : Number(id),
    };
  }

  /** Queues an async capture (Pro): 202 with the job's id and status URL. */
  async queue(options: CaptureOptions, webhookUrl?: string): Promise<QueuedJob> {
    const res = await this.#request('POST', '/v1/screenshots', {
      ...options,
      async: true,
      ...(webhookUrl === undefined ? {} : { webhook_url: webhookUrl }),
    });
    return (await res.json()) as QueuedJob;
  }

  /** GET /v1/screenshots/{id}: a job's status (`job_...`) or a Pro record's. */
  async screenshot(id: string | number): Promise<ScreenshotStatus> {
    const res = await this.#request('GET', `/v1/screenshots/${encodeURIComponent(String(id))}`);
    return (await res.json()) as ScreenshotStatus;
  }

  /** Reads a job's status until it has succeeded or failed. */
  async wait(id: string, options: WaitOptions = {}): Promise<ScreenshotStatus> {
    const end = Date.now() + (options.timeoutMs ?? 300_000);
    for (;;) {
      const status = await this.screenshot(id);
      options.onStatus?.(status);
      if (status.status === 'succeeded' || status.status === 'failed') return status;
      if (Date.now() > end) {
        throw new ShotsmithError({
          status: 0,
          code: 'timeout',
          message: `job ${id} is still ${status.status}`,
        });
      }
      await sleep(options.intervalMs ?? 500, options.signal);
    }
  }

  /**
   * POST /v1/screenshots/batch (Pro): 1 to 50 captures queued as async jobs in one request,
   * all or none (a bad one is a 400 naming `requests[i]`). With `webhookUrl`, each job's
   * `screenshot.*` event and one `batch.completed` are POSTed there.
   */
  async batch(requests: readonly CaptureOptions[], webhookUrl?: string): Promise<QueuedBatch> {
    const res = await this.#request('POST', '/v1/screenshots/batch', {
      requests,
      ...(webhookUrl === undefined ? {} : { webhook_url: webhookUrl }),
    });
    return (await res.json()) as QueuedBatch;
  }

  /** GET /v1/screenshots/batch/{id}: the batch's counts and each job's status. */
  async getBatch(id: string): Promise<BatchStatus> {
    const res = await this.#request('GET', `/v1/screenshots/batch/${encodeURIComponent(id)}`);
    return (await res.json()) as BatchStatus;
  }

  /** Reads a batch until every job has ended (`status: "completed"`). */
  async waitBatch(
    id: string,
    options: Omit<WaitOptions, 'onStatus'> & { onStatus?: (batch: BatchStatus) => void } = {},
  ): Promise<BatchStatus> {
    const end = Date.now() + (options.timeoutMs ?? 300_000);
    for (;;) {
      const batch = await this.getBatch(id);
      options.onStatus?.(batch);
      if (batch.status === 'completed') return batch;
      if (Date.now() > end) {
        throw new ShotsmithError({
          status: 0,
          code: 'timeout',
          message: `batch ${id} is still running (${batch.succeeded + batch.failed} of ${batch.total} ended)`,
        });
      }
      await sleep(options.intervalMs ?? 500, options.signal);
    }
  }

  /** GET /v1/screenshots: one page of the account's records, newest first (Pro). */
  async list(options: PageOptions = {}): Promise<ScreenshotList> {
    const res = await this.#request('GET', `/v1/screenshots${pageQuery(options)}`);
    return (await res.json()) as ScreenshotList;
  }

  /**
   * Monitors (Pro): a page captured on a schedule and compared with its last image; a change
   * past the threshold is a `monitor.changed` webhook and a run with a diff image.
   */
  readonly monitors = {
    /**
     * POST /v1/monitors: 201 with the monitor, `status: "active"` and its `next_run_at`. An
     * html monitor is answered with `html_bytes` and `html_sha256`, never its document.
     */
    create: async (monitor: MonitorRequest): Promise<Monitor> =>
      this.#json<Monitor>('POST', '/v1/monitors', monitor),
    /** GET /v1/monitors: one page of the account's monitors, most recent first. */
    list: async (options: PageOptions = {}): Promise<MonitorList> =>
      this.#json<MonitorList>('GET', `/v1/monitors${pageQuery(options)}`),
    /** GET /v1/monitors/{id}. */
    get: async (id: string): Promise<Monitor> =>
      this.#json<Monitor>('GET', `/v1/monitors/${encodeURIComponent(id)}`),
    /** PATCH /v1/monitors/{id}: `{status: "paused"}` pauses it, `"active"` resumes it. */
    update: async (id: string, update: MonitorUpdate): Promise<Monitor> =>
      this.#json<Monitor>('PATCH', `/v1/monitors/${encodeURIComponent(id)}`, update),
    /** DELETE /v1/monitors/{id}: the monitor, its runs and their images (404 at once). */
    delete: async (id: string): Promise<void> => {
      const res = await this.#request('DELETE', `/v1/monitors/${encodeURIComponent(id)}`);
      await res.arrayBuffer();
    },
    /** POST /v1/monitors/{id}/run: a run now (one unit); its slot in the schedule stays. */
    run: async (id: string): Promise<MonitorRunStarted> =>
      this.#json<MonitorRunStarted>('POST', `/v1/monitors/${encodeURIComponent(id)}/run`),
    /** GET /v1/monitors/{id}/runs: one page of its runs, newest first. */
    runs: async (id: string, options: PageOptions = {}): Promise<MonitorRunList> =>
      this.#json<MonitorRunList>(
        'GET',
        `/v1/monitors/${encodeURIComponent(id)}/runs${pageQuery(options)}`,
      ),
  };

  /**
   * Storage destinations (docs/destinations.md): your own S3-compatible buckets a capture is
   * written into with the `storage` option (`{destination: 'dst_...', path?, hosted?}`). Adding
   * one takes a plan with `storage_destinations` (Pro). Their credentials are never answered.
   */
  readonly destinations = {
    /**
     * POST /v1/storage-destinations: saved only after a test write into the bucket (and its
     * delete) succeeded; otherwise a 400 `storage_test_failed` naming the provider's code
     * (`AccessDenied`, `NoSuchBucket`, ...), or `url_not_allowed` for an endpoint the
     * service may not reach.
     */
    create: async (destination: StorageDestinationRequest): Promise<StorageDestination> =>
      this.#json<StorageDestination>('POST', '/v1/storage-destinations', destination),
    /** GET /v1/storage-destinations: every destination of the account, oldest first. */
    list: async (): Promise<StorageDestinationList> =>
      this.#json<StorageDestinationList>('GET', '/v1/storage-destinations'),
    /** GET /v1/storage-destinations/{id}. */
    get: async (id: string): Promise<StorageDestination> =>
      this.#json<StorageDestination>('GET', `/v1/storage-destinations/${encodeURIComponent(id)}`),
    /** POST /v1/storage-destinations/{id}/test: the test write again; `tested_at` moves on. */
    test: async (id: string): Promise<StorageDestination> =>
      this.#json<StorageDestination>(
        'POST',
        `/v1/storage-destinations/${encodeURIComponent(id)}/test`,
      ),
    /** DELETE /v1/storage-destinations/{id}: forgotten at once; the objects in the bucket stay. */
    delete: async (id: string): Promise<void> => {
      const res = await this.#request(
        'DELETE',
        `/v1/storage-destinations/${encodeURIComponent(id)}`,
      );
      await res.arrayBuffer();
    },
  };

  /** DELETE /v1/screenshots/{id}: the record and its image. */
  async delete(id: number): Promise<void> {
    await (
      await this.#request('DELETE', `/v1/screenshots/${encodeURIComponent(String(id))}`)
    ).arrayBuffer();
  }

  /** GET /v1/usage. */
  async usage(): Promise<Usage> {
    return (await (await this.#request('GET', '/v1/usage')).json()) as Usage;
  }

  /** GET /v1/plans (public). */
  async plans(): Promise<Plans> {
    return (await (await this.#request('GET', '/v1/plans')).json()) as Plans;
  }

  /** GET /v1/devices (public). */
  async devices(): Promise<Devices> {
    return (await (await this.#request('GET', '/v1/devices')).json()) as Devices;
  }

  /**
   * GET /v1/proxies: the operator's proxies a capture can go out through, each one's `id`
   * (the `proxy` option) and the countries it serves (`proxy_country`). Using one takes a
   * plan with `proxies` (Pro).
   */
  async proxies(): Promise<Proxies> {
    return (await (await this.#request('GET', '/v1/proxies')).json()) as Proxies;
  }

  /** A signed render link on this client's base URL (see `renderLink`). */
  renderLink(link: {
    keyId: number;
    signingSecret: string;
    options: Readonly<Record<string, LinkOptionValue | undefined>> & { url: string };
    expires?: number | Date;
  }): Promise<string> {
    return renderLink({ ...link, baseUrl: this.baseUrl });
  }

  async #json<T>(method: string, path: string, body?: unknown): Promise<T> {
    return (await (await this.#request(method, path, body)).json()) as T;
  }

  async #request(method: string, path: string, body?: unknown): Promise<Response> {
    for (let attempt = 0; ; attempt++) {
      let res: Response;
      try {
        res = await this.#fetch(`${this.baseUrl}${path}`, {
          method,
          headers: {
            'x-api-key': this.#apiKey,
            accept: 'application/json',
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
          // The key is a password: a redirect (a moved service, a hostile proxy) would carry
          // it to wherever Location points, so none is followed.
          redirect: 'manual',
          signal: AbortSignal.timeout(this.#timeoutMs),
        });
      } catch (err) {
        throw new ShotsmithError({
          status: 0,
          code: 'network_error',
          message: `could not reach ${this.baseUrl}: ${err instanceof Error ? err.message : String(err)}`,
        });
      }
      if (res.ok) return res;
      if (res.type === 'opaqueredirect' || (res.status >= 300 && res.status < 400)) {
        await res.body?.cancel();
        throw redirected(res, this.baseUrl);
      }
      const error = await ShotsmithError.fromResponse(res);
      const wait = (error.retryAfter ?? 1) * 1000;
      if (!RETRIED.has(res.status) || attempt >= this.#maxRetries || wait > this.#maxRetryDelayMs) {
        throw error;
      }
      await sleep(wait);
    }
  }
}

function pageQuery(options: PageOptions): string {
  const query = new URLSearchParams();
  if (options.limit !== undefined) query.set('limit', String(options.limit));
  if (options.cursor !== undefined) query.set('cursor', options.cursor);
  return query.size > 0 ? `?${query}` : '';
}

/** A redirect the client refused to follow, naming where it pointed (no key went there). */
function redirected(res: Response, baseUrl: string): ShotsmithError {
  const location = res.headers.get('location');
  let where = 'another location';
  if (location) {
    try {
      where = new URL(location, baseUrl).origin;
    } catch {
      where = 'an invalid location';
    }
  }
  return new ShotsmithError({
    status: res.status,
    code: 'unexpected_redirect',
    message: `the service answered ${res.status} redirecting to ${where}; the client follows no redirect with the API key (check the base URL)`,
  });
}
