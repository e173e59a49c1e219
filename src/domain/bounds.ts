import { DAY_MS, HOUR_MS, MINUTE_MS } from '../lib/time.ts';

/**
 * Every fixed limit and bound of the service, as named data in one place: the request
 * schemas, the plan-file checks, the use cases and the adapters read them from here, and
 * docs/plans-and-limits.md lists each one (test/docs.test.ts fails when it misses a value).
 *
 * Two other tables sit beside this one. What differs per plan (quotas, rates, viewport,
 * formats, retention) is the plan table, `DEFAULT_PLANS` in plans.ts, which an operator
 * overrides with PLANS_FILE; what an operator tunes per deployment (render concurrency and
 * deadline, image bounds, memory per renderer) is an environment variable, parsed in
 * src/config/config.ts. What stays here does not change without a release.
 *
 * Durations are milliseconds (`...Ms`) unless the name says seconds; sizes are bytes or
 * characters as named.
 */
export const BOUNDS = {
  /** The HTTP surface. */
  http: {
    /** A JSON request body; a larger one is 413 (docs/errors.md). */
    bodyBytes: 64 * 1024,
    /** A capture body with `html` or `markdown` (docs/api.md, "HTML and Markdown"). */
    documentBodyBytes: 1.5 * 2 ** 20,
    /** A payment-provider webhook delivery (an invoice with many lines is large). */
    webhookBodyBytes: 512 * 1024,
    /** An idle keep-alive connection is closed after this. */
    keepAliveTimeoutMs: 72_000,
    /** A whole request, body included, must arrive within this. */
    requestTimeoutMs: 120_000,
  },

  /** Accounts, sessions and API keys (docs/api.md, "Accounts and sessions", "API keys"). */
  account: {
    /** Sign-up password length, in characters. */
    passwordMin: 8,
    passwordMax: 256,
    /** The login form's password bound (wider than sign-up's). */
    loginPasswordMax: 1024,
    emailMax: 254,
    sessionLifetimeMs: 30 * DAY_MS,
    /** Failed logins before further attempts get 429, per email and per client IP. */
    loginFailuresPerEmail: 10,
    loginFailuresPerIp: 100,
    loginWindowMs: 15 * MINUTE_MS,
    maxActiveKeys: 20,
    keyNameMax: 100,
    /** last_used_at is written at most this often per key. */
    keyTouchIntervalMs: MINUTE_MS,
  },

  /** The capture request (docs/api.md, "POST /v1/screenshots"). */
  capture: {
    /** `url`, in characters. */
    urlMaxLength: 2048,
    /** `html`, in UTF-8 bytes. */
    maxHtmlBytes: 2 ** 20,
    /** `markdown`, in UTF-8 bytes. */
    maxMarkdownBytes: 256 * 1024,
    /** Each file of a capture's `content` (HTML, text, Markdown), in UTF-8 bytes; cut there. */
    maxContentBytes: 5 * 2 ** 20,
    /** How long a result is served from the cache by default (`cache_ttl`: 15 minutes). */
    cacheTtlMs: 15 * MINUTE_MS,
    /** The longest `cache_ttl` a request may ask for, in seconds (a day). */
    maxCacheTtlSeconds: 86_400,
    /** Largest `clip` coordinate or extent, in CSS px (the image bounds cut it further). */
    maxClipCoordinate: 100_000,
    /** `quality` range (JPEG and WebP). */
    minQuality: 1,
    maxQuality: 100,
    /** `device_scale_factor` range; each plan allows up to its own maximum within it. */
    minDeviceScaleFactor: 1,
    maxDeviceScaleFactor: 3,
    /** `delay`, the extra wait before the capture. */
    maxDelayMs: 10_000,
    /** `selector`, `wait_for_selector` and each `hide_selectors` entry, in characters. */
    maxSelectorLength: 500,
    /** Entries of `hide_selectors`. */
    maxHideSelectors: 50,
    /** `user_agent`, in characters. */
    maxUserAgentLength: 512,
    /** `locale`, in characters (a BCP 47 tag). */
    maxLocaleLength: 35,
    /** `timezone`, in characters (an IANA zone name). */
    maxTimezoneLength: 64,
    /** `styles` and `scripts`, each, in characters (the body limit of 64 KiB still holds). */
    maxInjectedLength: 32_768,
    /** Entries of `block_requests`. */
    maxBlockPatterns: 50,
    /** Each `block_requests` pattern, in characters. */
    maxBlockPatternLength: 1_024,
    /** Entries of `headers`. */
    maxHeaders: 20,
    /** Each `headers` name, in characters. */
    maxHeaderNameLength: 256,
    /** Each `headers` value, in characters. */
    maxHeaderValueLength: 1_024,
    /** Entries of `cookies`. */
    maxCookies: 50,
    /** A cookie's name and value together, in characters (browsers' own bound). */
    maxCookieLength: 4_096,
    /** A cookie's `domain` and `path`, each, in characters. */
    maxCookieScopeLength: 1_024,
    /** `http_auth` username and password, each, in characters. */
    maxCredentialLength: 256,
    /** Each text of `metadata` (title, descriptions), in characters; longer is cut. */
    maxMetadataText: 1_024,
    /**
     * Any other value read back from a rendered page (the class names, ids and links the ad
     * list's hiding rules are looked up by), in characters (docs/security.md).
     */
    pageValueMaxChars: 65_536,
    /** The first line of what `scripts` threw, kept in the 400, in characters. */
    scriptErrorMaxChars: 300,
  },

  /** Listing screenshots (`GET /v1/screenshots`, the dashboard's history). */
  listing: {
    defaultPageSize: 20,
    maxPageSize: 100,
    /** `cursor`, in characters. */
    cursorMaxLength: 100,
  },

  /** Signed render links (docs/api.md, "Signed render links"). */
  links: {
    /** How far ahead a link's `expires` may be, in seconds (7 days). */
    maxLifetimeSeconds: 7 * 24 * 3600,
    /** Query parameters in one link, repeated ones counted each time. */
    maxParams: 100,
    /**
     * The shortest `cache_ttl` a link may ask for, in seconds: a link is replayed by whoever
     * holds it, and each replay that renders costs its owner a unit, so one link renders at
     * most once a minute (docs/api.md, "Signed render links").
     */
    minCacheTtlSeconds: 60,
  },

  /** Async captures and webhooks (docs/api.md, "Async captures", "Webhooks"). */
  jobs: {
    /** `webhook_url`, in characters. */
    webhookUrlMaxLength: 2048,
    /** Attempts a job gets (take-overs after its node died, and retryable failures). */
    maxAttempts: 3,
    /** A job whose attempt failed in a way that may pass waits this long (at most the lease). */
    retryDelayMs: 5_000,
    /** How often an idle worker looks for queued jobs (a job queued on this node wakes it). */
    pollIntervalMs: 500,
    /**
     * A queued job's render waits until no synchronous render has run on its node for this
     * long (lib/foreground.ts) ...
     */
    foregroundQuietMs: 250,
    /** ... or this long at most, so a node busy with synchronous captures still drains its queue. */
    foregroundMaxWaitMs: 10_000,
    /** With BullMQ: how often a node looks for jobs whose dispatch was lost, and adds them again. */
    strandedSweepMs: 10_000,
    /** A webhook delivery that gets no answer within this is a failed attempt. */
    webhookTimeoutMs: 15_000,
    /** The waits between delivery attempts: the first within 30 s, all of them over 24 h. */
    webhookBackoffMs: [
      10_000,
      MINUTE_MS,
      5 * MINUTE_MS,
      30 * MINUTE_MS,
      2 * HOUR_MS,
      5 * HOUR_MS,
      10 * HOUR_MS,
      10 * HOUR_MS,
    ],
    /** A delivery's response body kept as its last error, in characters. */
    webhookErrorMax: 500,
    /** Deliveries listed in the dashboard. */
    deliveriesListed: 50,
    /** Attempts listed for one delivery (the newest). */
    attemptsListed: 50,
    /**
     * Deliveries of one account being sent at once, on all nodes together: an account whose
     * endpoint never answers holds at most this many sending slots, never everyone's.
     */
    deliveriesInFlightPerAccount: 2,
    /** Deliveries of one account waiting to be sent beyond which a resend is refused. */
    maxPendingResends: 10,
    /** Finished jobs, completed batches and webhook deliveries are kept this long, then swept. */
    recordRetentionMs: 30 * DAY_MS,
    /** Requests in one batch (docs/api.md, "Batches"). */
    batchMaxRequests: 50,
    /**
     * The body of POST /v1/screenshots/batch: room for the most requests each as large as a
     * capture body may be alone (50 x 64 KiB), so any request valid alone fits in a batch.
     */
    batchBodyBytes: 50 * 64 * 1024,
  },

  /** Rate windows that are not a plan field. */
  rates: {
    /** The per-minute windows (plan `rate_per_minute`, and the one below). */
    windowMs: MINUTE_MS,
    /** Requests per minute per account on the programmatic endpoints other than capture. */
    otherEndpointsPerMinute: 600,
    /**
     * Dashboard changes (a POST or DELETE by session cookie on keys, secrets, billing and
     * images) per minute per account, in a window of their own: far more than a person
     * clicks, and a bound on what a stolen session can make the service and the payment
     * provider do.
     */
    sessionChangesPerMinute: 120,
  },

  /** Billing (docs/api.md, "Billing"). */
  billing: {
    /**
     * Applied webhook event ids are kept this long for deduplication; Stripe stops retrying
     * a delivery after three days.
     */
    eventRetentionMs: 30 * DAY_MS,
    /** A webhook signature's timestamp may be this far from now, either way. */
    webhookToleranceSeconds: 300,
    /** The built-in local provider: how long its checkout and portal pages stay usable. */
    localCheckoutLifetimeMs: DAY_MS,
    localPortalLifetimeMs: HOUR_MS,
    /** Subscriptions the local provider moves on per settle run. */
    localSettleBatch: 100,
    /** The id in a local checkout or portal page's path, in characters. */
    localSessionIdMaxLength: 100,
  },

  /** What the service reads from Chromium (docs/security.md, "Hostile pages"). */
  browser: {
    /**
     * A CDP answer from Chromium, counted in bytes before it is decoded; a larger one is
     * dropped undecoded and only the command that asked for it fails. The largest legitimate
     * one is a capture at the 64-megapixel default of MAX_IMAGE_PIXELS as a PNG with alpha
     * (4 bytes a pixel of noise, base64): about 343 MB measured. Node's longest string,
     * 0x1fffffe8 characters (512 MiB), stays well above. CDP_MAX_MESSAGE_MB lowers it.
     */
    maxProtocolMessageBytes: 384 * 1024 * 1024,
    /**
     * A CDP event (a message Chromium sends unasked: console output, exceptions, dialogs,
     * network events), in bytes: what a page can make as large as it likes, over and over,
     * so far below the answers' bound (a page's URL, the largest legitimate part, is at most
     * 2 MiB). Over it, the event is skipped: read and dropped to its end, undecoded.
     */
    maxEventMessageBytes: 32 * 1024 * 1024,
    /** A PDF (`format: "pdf"`), read as a stream; a larger one is 400 invalid_request. */
    maxPdfBytes: 50 * 1024 * 1024,
    /** Bytes asked of Chromium per read of a PDF stream (IO.read). */
    pdfReadChunkBytes: 1024 * 1024,
    /**
     * Output px an image may have and still be drawn in one piece: a compositor surface's
     * maximum texture size (16,384 on most GPUs), past which Chromium repeats tiles. A taller
     * one is drawn in slices and joined (docs/api.md, "Tall pages").
     */
    onePieceMaxHeight: 16_384,
    /**
     * Output px of one slice of a tall image, at most. Each slice arrives as one CDP message
     * of base64 decoded in Node, and those transient strings are most of the memory a tall
     * capture takes beyond its result: on a 1280 x 30,000 page of random pixels (nothing for
     * PNG to compress, the worst case) Node grew by 4.1x the raw image with slices of 16,384
     * rows, 3.1x with 8,192 and 2.1x with 4,096, while a 50,000 px page of text took 1.6, 1.7
     * and 1.8 s to draw (4, 7 and 13 slices). It also stays under the 8,192 px texture limit
     * of some GPUs.
     */
    sliceHeight: 4_096,
    /**
     * The join of a tall image's slices, at most: libvips cannot be interrupted from
     * JavaScript, so a capture whose deadline passes while joining answers at once and the
     * join left behind stops by this bound at the latest. A 38-megapixel join of random
     * pixels took about 2 s here.
     */
    joinTimeoutSeconds: 60,
    /** WebP's own limit on a side (14 bits in its header): a webp image is cut there. */
    webpMaxHeight: 16_383,
    /**
     * JPEG's, as libjpeg (Chromium's and libvips') writes it: JPEG_MAX_DIMENSION, though the
     * header could say 65,535. A jpeg image is cut there whatever MAX_PAGE_HEIGHT says.
     */
    jpegMaxHeight: 65_500,
    /**
     * A single-page PDF, in CSS px (170 inches; PDF readers refuse pages past 200), whatever
     * MAX_PAGE_HEIGHT allows images: the bound it had before tall images.
     */
    pdfMaxHeight: 16_384,
  },

  /** Admission to the render pool under overload (docs/security.md, "Overload"). */
  admission: {
    /** Successful renders whose median is the node's typical render time. */
    renderTimeSamples: 20,
    /** Fewer successful renders than this: no capture is refused for its deadline. */
    minRenderTimeSamples: 5,
  },

  /** Image storage (docs/deployment.md, "When a dependency fails"). */
  storage: {
    /** One HTTP attempt to S3: connecting, sending, the answer's headers, and any idle gap. */
    s3RequestTimeoutMs: 5_000,
    /** Connecting to S3, within the attempt's budget. */
    s3ConnectTimeoutMs: 2_000,
    /** Attempts per S3 operation (one retry): a dead or hung endpoint fails after two. */
    s3Attempts: 2,
    /**
     * Beyond the attempts, for the SDK's backoff between them: an operation ends, answered or
     * not, within attempts x request timeout + this (11 s), then 503 `storage_error`.
     */
    s3BackoffSlackMs: 1_000,
    /** Images listed per page by the orphan sweep. */
    orphanSweepPageSize: 1_000,
  },

  /** Name lookups before and during a render (docs/egress.md, "DNS"). */
  dns: {
    /** An answer is kept for its TTL, clamped to this range. */
    minTtlMs: 5_000,
    maxTtlMs: 5 * MINUTE_MS,
    /** Kept when the answer carries no TTL (/etc/hosts through getaddrinfo). */
    unknownTtlMs: 30_000,
    /** NXDOMAIN, SERVFAIL, no address, no answer in time. */
    failureTtlMs: 10_000,
    /** A lookup, waiting for a slot included, ends after this. */
    timeoutMs: 5_000,
    /** Names kept at most; the oldest written goes first. */
    maxEntries: 10_000,
    /** Lookups in flight for one client (`user:<id>`, `demo:<ip or /64>`) before a render. */
    perClient: 4,
    /** ... and for every client together. */
    total: 64,
    /** Lookups the egress proxy has in flight (subresources of pages being rendered). */
    proxy: 32,
  },

  /** Monitors (docs/api.md, "Monitors"). */
  monitors: {
    /** A monitor's `name`, in characters. */
    nameMaxLength: 200,
    /** How often each node looks for monitors due (the maintenance tick). */
    tickMs: 2_000,
    /** Runs within the first minute of their slot: a monitor's fixed offset is below this. */
    spreadMs: 60_000,
    /** Monitors claimed in one transaction (their rows locked together). */
    claimBatch: 100,
    /** Monitors one tick claims at most; the rest wait for the next tick. */
    claimsPerTick: 5_000,
    /** Runs a tick starts (holds a unit, writes the run and its job) at once. */
    startsAtOnce: 8,
    /**
     * Stored files a monitor's deletion deletes at once, after its image records (so its
     * URLs answer 404 already); the rest wait their turn.
     */
    imageDeletesAtOnce: 8,
    /** Failed runs in a row before `monitor.failed` is sent. */
    failuresBeforeEvent: 3,
    /** While a monitor keeps failing, `monitor.failed` is sent at most this often. */
    failedEventEveryMs: 24 * 60 * 60_000,
    /**
     * The most pixels a comparison works on: larger images (a tall full-page monitor) are
     * compared, and their diff drawn, scaled down to this. It bounds one comparison's memory
     * at about 12 bytes a pixel (two decoded images and the diff: about 200 MB) and its time
     * (bench/monitors.ts prints both), whatever MAX_IMAGE_PIXELS allows.
     */
    compareMaxPixels: 16_000_000,
    /**
     * A comparison that takes longer fails its run, and its worker is replaced. The worst
     * case, two bounded images of noise, takes about 8 s of one core (bench/monitors.ts).
     */
    compareTimeoutMs: 120_000,
    /** The comparison worker ends after this long without work, giving its memory back. */
    compareIdleMs: 30_000,
  },

  /** The largest values PLANS_FILE may give a plan field (docs/plans-and-limits.md). */
  planFields: {
    /** Largest `max_queued_jobs`. */
    maxQueuedJobs: 10_000,
    /** Largest `max_monitors`. */
    maxMonitors: 10_000,
    /** Largest `min_monitor_interval`, in minutes: the longest `every` (7 days). */
    maxMonitorIntervalMinutes: 7 * 24 * 60,
    maxQuota: 1_000_000_000,
    maxRatePerMinute: 1_000_000,
    maxRequestsPerHour: 1_000_000,
    maxConcurrentRenders: 1_000,
    /** `max_width` and `max_height`, in CSS pixels. */
    maxViewport: 16_384,
    /** Ten years. */
    maxRetentionHours: 24 * 366 * 10,
  },
} as const;
