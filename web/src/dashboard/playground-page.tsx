import { type FormEvent, useId, useMemo, useState } from 'react';
import type { CaptureResult } from '../api/types.ts';
import { ApiError, apiCall, apiOrigin } from '../shared/api.ts';
import { CopyButton } from '../shared/copy-button.tsx';
import { fetchDevices } from '../shared/devices.ts';
import { formatDateTime, formatNumber, normalizeUrl, shortUrl } from '../shared/format.ts';
import { fetchPlans, type Plan } from '../shared/plans.ts';
import { Link } from './router.tsx';
import { useSession } from './session.tsx';
import { Notice, PageTitle, SkeletonText, useResource } from './ui.tsx';

interface Options {
  url: string;
  format: string;
  width: number;
  height: number;
  fullPage: boolean;
  fresh: boolean;
  scale: number;
  /** Empty: the service's default. */
  userAgent: string;
  locale: string;
  timezone: string;
  print: boolean;
  styles: string;
  scripts: string;
  click: string;
  scrollIntoView: string;
  failOnHttpError: boolean;
  /** Seconds; the API's default is 900. */
  cacheTtl: number;
  /** "x, y, width, height" in CSS px; anything else leaves clip out. */
  clip: string;
  /** One URL pattern per line. */
  blockRequests: string;
  blockResources: string[];
  /** One "Name: value" per line. */
  headers: string;
  /** One "name=value" per line. */
  cookies: string;
  authUser: string;
  authPassword: string;
  blockAds: boolean;
  blockTrackers: boolean;
  blockCookieBanners: boolean;
  /** A preset name; empty: none. With one, width, height and scale are the preset's. */
  device: string;
  mobile: boolean;
  hasTouch: boolean;
  landscape: boolean;
  metadata: boolean;
  pdfPaper: string;
  pdfLandscape: boolean;
  pdfSinglePage: boolean;
}

/** The request kinds `block_resources` names, in the API's order. */
const RESOURCE_KINDS = [
  'image',
  'media',
  'font',
  'stylesheet',
  'script',
  'xhr',
  'fetch',
  'websocket',
  'other',
] as const;

const lines = (text: string) =>
  text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);

/** "Name: value" lines as the API's headers object (lines without a colon are left out). */
export function parseHeaders(text: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const line of lines(text)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim()] = line.slice(colon + 1).trim();
  }
  return headers;
}

/** "name=value" lines as the API's cookies (lines without "=" are left out). */
export function parseCookies(text: string): { name: string; value: string }[] {
  return lines(text).flatMap((line) => {
    const eq = line.indexOf('=');
    return eq > 0 ? [{ name: line.slice(0, eq).trim(), value: line.slice(eq + 1).trim() }] : [];
  });
}

/** "x, y, width, height" as the API's clip, or null. */
export function parseClip(
  text: string,
): { x: number; y: number; width: number; height: number } | null {
  const parts = text.split(',').map((p) => p.trim());
  if (parts.length !== 4 || parts.some((p) => p === '')) return null;
  const [x, y, width, height] = parts.map(Number) as [number, number, number, number];
  if (![x, y, width, height].every(Number.isFinite) || x < 0 || y < 0 || width < 1 || height < 1) {
    return null;
  }
  return { x, y, width, height };
}

/** The JSON body for the options, leaving out what equals the API's defaults. */
export function captureBody(o: Options): Record<string, unknown> {
  return {
    url: normalizeUrl(o.url) || 'https://example.com',
    format: o.format,
    ...(o.device ? { device: o.device } : { width: o.width, height: o.height }),
    ...(o.fullPage && o.format !== 'pdf' ? { full_page: true } : {}),
    ...(o.fresh ? { fresh: true } : {}),
    ...(o.scale !== 1 && !o.device ? { device_scale_factor: o.scale } : {}),
    ...(o.userAgent.trim() ? { user_agent: o.userAgent.trim() } : {}),
    ...(o.locale.trim() ? { locale: o.locale.trim() } : {}),
    ...(o.timezone.trim() ? { timezone: o.timezone.trim() } : {}),
    ...(o.print ? { media_type: 'print' } : {}),
    ...(o.styles.trim() ? { styles: o.styles } : {}),
    ...(o.scripts.trim() ? { scripts: o.scripts } : {}),
    ...(o.click.trim() ? { click: o.click.trim() } : {}),
    ...(o.scrollIntoView.trim() ? { scroll_into_view: o.scrollIntoView.trim() } : {}),
    ...(o.failOnHttpError ? { fail_on_http_error: true } : {}),
    ...(o.cacheTtl !== 900 ? { cache_ttl: o.cacheTtl } : {}),
    ...(!o.fullPage && o.format !== 'pdf' && parseClip(o.clip) ? { clip: parseClip(o.clip) } : {}),
    ...(lines(o.blockRequests).length > 0 ? { block_requests: lines(o.blockRequests) } : {}),
    ...(o.blockResources.length > 0 ? { block_resources: o.blockResources } : {}),
    ...(Object.keys(parseHeaders(o.headers)).length > 0
      ? { headers: parseHeaders(o.headers) }
      : {}),
    ...(parseCookies(o.cookies).length > 0 ? { cookies: parseCookies(o.cookies) } : {}),
    ...(o.authUser.trim()
      ? { http_auth: { username: o.authUser.trim(), password: o.authPassword } }
      : {}),
    ...(o.blockAds ? { block_ads: true } : {}),
    ...(o.blockTrackers ? { block_trackers: true } : {}),
    ...(o.blockCookieBanners ? { block_cookie_banners: true } : {}),
    ...(o.mobile ? { mobile: true } : {}),
    ...(o.hasTouch ? { has_touch: true } : {}),
    ...(o.landscape ? { landscape: true } : {}),
    ...(o.metadata ? { metadata: true } : {}),
    ...(o.format === 'pdf' && o.pdfPaper !== 'a4' ? { pdf_paper: o.pdfPaper } : {}),
    ...(o.format === 'pdf' && o.pdfLandscape ? { pdf_landscape: true } : {}),
    ...(o.format === 'pdf' && o.pdfSinglePage ? { pdf_single_page: true } : {}),
  };
}

const shellQuote = (text: string) => `'${text.replaceAll("'", `'\\''`)}'`;

export function curlCommand(body: Record<string, unknown>, key: string): string {
  return [
    `curl -X POST ${apiOrigin()}/v1/screenshots \\`,
    `  -H "X-API-Key: ${key}" \\`,
    '  -H "Content-Type: application/json" \\',
    `  -d ${shellQuote(JSON.stringify(body, null, 2).replaceAll('\n', '\n  '))}`,
  ].join('\n');
}

export function PlaygroundPage() {
  const { user, createdKeys } = useSession();
  const plans = useResource((signal) => fetchPlans(signal));
  const devices = useResource((signal) => fetchDevices(signal));
  const plan: Plan | undefined = plans.data?.find((p) => p.name === user.plan);
  const latestKey = Object.entries(createdKeys).sort(([a], [b]) => Number(b) - Number(a))[0]?.[1];

  const [key, setKey] = useState(latestKey ?? '');
  const [showKey, setShowKey] = useState(false);
  const [options, setOptions] = useState<Options>({
    url: 'https://example.com',
    format: 'png',
    width: 1280,
    height: 800,
    fullPage: false,
    fresh: false,
    scale: 1,
    userAgent: '',
    locale: '',
    timezone: '',
    print: false,
    styles: '',
    scripts: '',
    click: '',
    scrollIntoView: '',
    failOnHttpError: false,
    cacheTtl: 900,
    clip: '',
    blockRequests: '',
    blockResources: [],
    headers: '',
    cookies: '',
    authUser: '',
    authPassword: '',
    blockAds: false,
    blockTrackers: false,
    blockCookieBanners: false,
    device: '',
    mobile: false,
    hasTouch: false,
    landscape: false,
    metadata: false,
    pdfPaper: 'a4',
    pdfLandscape: false,
    pdfSinglePage: false,
  });
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [result, setResult] = useState<{ body: CaptureResult; headers: Headers } | null>(null);
  const ids = {
    key: useId(),
    keyHint: useId(),
    url: useId(),
    format: useId(),
    width: useId(),
    height: useId(),
    scale: useId(),
    sizeHint: useId(),
    userAgent: useId(),
    locale: useId(),
    timezone: useId(),
    styles: useId(),
    scripts: useId(),
    click: useId(),
    scrollIntoView: useId(),
    cacheTtl: useId(),
    clip: useId(),
    clipHint: useId(),
    blockRequests: useId(),
    headers: useId(),
    cookies: useId(),
    authUser: useId(),
    authPassword: useId(),
    device: useId(),
    deviceHint: useId(),
    pdfPaper: useId(),
  };

  const set = <K extends keyof Options>(name: K, value: Options[K]) =>
    setOptions((o) => ({ ...o, [name]: value }));
  const body = useMemo(() => captureBody(options), [options]);
  const trimmedKey = key.trim();
  const shownKey = trimmedKey ? `${trimmedKey.slice(0, 12)}…` : '$SHOTSMITH_KEY';

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

  return (
    <>
      <PageTitle title="Playground">Playground</PageTitle>
      <p className="page-intro">
        Run a real capture with one of your keys. It counts against your quota like any other
        request.
      </p>
      <div className="playground">
        <section className="card" aria-labelledby="pg-options">
          <h2 id="pg-options" className="card-title">
            Request
          </h2>
          <form className="stack" onSubmit={run} noValidate>
            <div className="field">
              <label htmlFor={ids.key}>API key</label>
              <div className="input-row">
                <input
                  id={ids.key}
                  className="input input-mono"
                  type={showKey ? 'text' : 'password'}
                  autoComplete="off"
                  spellCheck={false}
                  placeholder="sk_live_…"
                  value={key}
                  onChange={(e) => setKey(e.target.value)}
                  aria-describedby={ids.keyHint}
                />
                <button
                  type="button"
                  className="btn btn-secondary"
                  aria-pressed={showKey}
                  onClick={() => setShowKey((s) => !s)}
                >
                  {showKey ? 'Hide' : 'Show'}
                  <span className="visually-hidden"> key</span>
                </button>
              </div>
              <p id={ids.keyHint} className="field-hint">
                {latestKey
                  ? 'Filled in with the key you created in this tab. '
                  : 'Paste a key you stored. '}
                The dashboard keeps keys in memory only;{' '}
                <Link to="/dashboard/keys">create one</Link> if you need to.
              </p>
            </div>
            <div className="field">
              <label htmlFor={ids.url}>Page URL</label>
              <input
                id={ids.url}
                className="input"
                type="text"
                inputMode="url"
                spellCheck={false}
                value={options.url}
                onChange={(e) => set('url', e.target.value)}
              />
            </div>
            <div className="field-row">
              <div className="field">
                <label htmlFor={ids.format}>Format</label>
                <select
                  id={ids.format}
                  className="input"
                  value={options.format}
                  onChange={(e) => set('format', e.target.value)}
                >
                  {['png', 'jpeg', 'webp', 'pdf'].map((f) => (
                    <option key={f} value={f} disabled={plan ? !plan.formats.includes(f) : false}>
                      {f.toUpperCase()}
                      {plan && !plan.formats.includes(f) ? ' (Pro)' : ''}
                    </option>
                  ))}
                </select>
              </div>
              <div className="field">
                <label htmlFor={ids.width}>Width</label>
                <input
                  id={ids.width}
                  className="input"
                  type="number"
                  min={1}
                  max={plan?.max_width}
                  value={options.width}
                  onChange={(e) => set('width', Number(e.target.value) || 1)}
                  aria-describedby={ids.sizeHint}
                />
              </div>
              <div className="field">
                <label htmlFor={ids.height}>Height</label>
                <input
                  id={ids.height}
                  className="input"
                  type="number"
                  min={1}
                  max={plan?.max_height}
                  value={options.height}
                  onChange={(e) => set('height', Number(e.target.value) || 1)}
                  aria-describedby={ids.sizeHint}
                />
              </div>
            </div>
            <p id={ids.sizeHint} className="field-hint">
              CSS pixels, up to{' '}
              {plan ? (
                `${formatNumber(plan.max_width)}×${formatNumber(plan.max_height)}`
              ) : (
                <SkeletonText width={11} />
              )}{' '}
              on your plan; larger values are capped.
            </p>
            {options.format === 'pdf' && (
              <div className="field-row">
                <div className="field">
                  <label htmlFor={ids.pdfPaper}>PDF paper</label>
                  <select
                    id={ids.pdfPaper}
                    className="input"
                    value={options.pdfPaper}
                    onChange={(e) => set('pdfPaper', e.target.value)}
                  >
                    {['a4', 'letter', 'legal', 'a3', 'tabloid'].map((p) => (
                      <option key={p} value={p}>
                        {p === 'a4' || p === 'a3'
                          ? p.toUpperCase()
                          : p[0]?.toUpperCase() + p.slice(1)}
                      </option>
                    ))}
                  </select>
                </div>
                <div className="checks">
                  <label className="check">
                    <input
                      type="checkbox"
                      checked={options.pdfLandscape}
                      onChange={(e) => set('pdfLandscape', e.target.checked)}
                    />
                    PDF landscape
                  </label>
                  <label className="check">
                    <input
                      type="checkbox"
                      checked={options.pdfSinglePage}
                      onChange={(e) => set('pdfSinglePage', e.target.checked)}
                    />
                    One PDF page as tall as the content
                  </label>
                </div>
              </div>
            )}
            <div className="checks">
              <label className="check">
                <input
                  type="checkbox"
                  checked={options.fullPage}
                  onChange={(e) => set('fullPage', e.target.checked)}
                />
                Full page
              </label>
              {user.plan === 'pro' && (
                <label className="check">
                  <input
                    type="checkbox"
                    checked={options.fresh}
                    onChange={(e) => set('fresh', e.target.checked)}
                  />
                  Fresh render (skip the cache)
                </label>
              )}
            </div>
            {user.plan === 'pro' && (
              <div className="field field-narrow">
                <label htmlFor={ids.scale}>Device scale</label>
                <select
                  id={ids.scale}
                  className="input"
                  value={options.scale}
                  onChange={(e) => set('scale', Number(e.target.value))}
                >
                  {[1, 2, 3].map((s) => (
                    <option key={s} value={s}>
                      {s}×
                    </option>
                  ))}
                </select>
              </div>
            )}
            <details className="stack">
              <summary>Device</summary>
              <div className="field">
                <label htmlFor={ids.device}>Device preset</label>
                <select
                  id={ids.device}
                  className="input"
                  value={options.device}
                  onChange={(e) => set('device', e.target.value)}
                  aria-describedby={ids.deviceHint}
                >
                  <option value="">None (width and height above)</option>
                  {(devices.data ?? []).map((d) => (
                    <option key={d.name} value={d.name}>
                      {d.label}
                    </option>
                  ))}
                </select>
                <p id={ids.deviceHint} className="field-hint">
                  A preset sets the viewport, scale, touch and user agent; width, height and scale
                  above are then not sent.
                </p>
              </div>
              <div className="checks">
                <label className="check">
                  <input
                    type="checkbox"
                    checked={options.mobile}
                    onChange={(e) => set('mobile', e.target.checked)}
                  />
                  Mobile
                </label>
                <label className="check">
                  <input
                    type="checkbox"
                    checked={options.hasTouch}
                    onChange={(e) => set('hasTouch', e.target.checked)}
                  />
                  Touch
                </label>
                <label className="check">
                  <input
                    type="checkbox"
                    checked={options.landscape}
                    onChange={(e) => set('landscape', e.target.checked)}
                  />
                  Landscape
                </label>
              </div>
            </details>
            <details className="stack">
              <summary>Page context</summary>
              <div className="field">
                <label htmlFor={ids.userAgent}>User agent</label>
                <input
                  id={ids.userAgent}
                  className="input input-mono"
                  type="text"
                  spellCheck={false}
                  maxLength={512}
                  placeholder="Chromium's own"
                  value={options.userAgent}
                  onChange={(e) => set('userAgent', e.target.value)}
                />
              </div>
              <div className="field-row">
                <div className="field">
                  <label htmlFor={ids.locale}>Locale</label>
                  <input
                    id={ids.locale}
                    className="input"
                    type="text"
                    spellCheck={false}
                    maxLength={35}
                    placeholder="en-US"
                    value={options.locale}
                    onChange={(e) => set('locale', e.target.value)}
                  />
                </div>
                <div className="field">
                  <label htmlFor={ids.timezone}>Time zone</label>
                  <input
                    id={ids.timezone}
                    className="input"
                    type="text"
                    spellCheck={false}
                    maxLength={64}
                    placeholder="UTC"
                    value={options.timezone}
                    onChange={(e) => set('timezone', e.target.value)}
                  />
                </div>
              </div>
              <label className="check">
                <input
                  type="checkbox"
                  checked={options.print}
                  onChange={(e) => set('print', e.target.checked)}
                />
                Print style sheets (media type print)
              </label>
            </details>
            <details className="stack">
              <summary>Page actions</summary>
              <div className="field">
                <label htmlFor={ids.styles}>CSS to add</label>
                <textarea
                  id={ids.styles}
                  className="input input-mono"
                  rows={3}
                  spellCheck={false}
                  maxLength={32768}
                  value={options.styles}
                  onChange={(e) => set('styles', e.target.value)}
                />
              </div>
              <div className="field">
                <label htmlFor={ids.scripts}>JavaScript to run</label>
                <textarea
                  id={ids.scripts}
                  className="input input-mono"
                  rows={3}
                  spellCheck={false}
                  maxLength={32768}
                  value={options.scripts}
                  onChange={(e) => set('scripts', e.target.value)}
                />
              </div>
              <div className="field-row">
                <div className="field">
                  <label htmlFor={ids.click}>Click (selector)</label>
                  <input
                    id={ids.click}
                    className="input input-mono"
                    type="text"
                    spellCheck={false}
                    maxLength={500}
                    value={options.click}
                    onChange={(e) => set('click', e.target.value)}
                  />
                </div>
                <div className="field">
                  <label htmlFor={ids.scrollIntoView}>Scroll to (selector)</label>
                  <input
                    id={ids.scrollIntoView}
                    className="input input-mono"
                    type="text"
                    spellCheck={false}
                    maxLength={500}
                    value={options.scrollIntoView}
                    onChange={(e) => set('scrollIntoView', e.target.value)}
                  />
                </div>
              </div>
              <label className="check">
                <input
                  type="checkbox"
                  checked={options.failOnHttpError}
                  onChange={(e) => set('failOnHttpError', e.target.checked)}
                />
                Fail when the page answers 4xx or 5xx
              </label>
              <div className="field">
                <label htmlFor={ids.clip}>Clip region (x, y, w, h)</label>
                <input
                  id={ids.clip}
                  className="input input-mono"
                  type="text"
                  spellCheck={false}
                  placeholder="0, 0, 800, 600"
                  value={options.clip}
                  onChange={(e) => set('clip', e.target.value)}
                  aria-describedby={ids.clipHint}
                />
                <p id={ids.clipHint} className="field-hint">
                  Left, top, width and height in CSS pixels of the page; not with a full-page
                  capture.
                </p>
              </div>
              <label className="check">
                <input
                  type="checkbox"
                  checked={options.metadata}
                  onChange={(e) => set('metadata', e.target.checked)}
                />
                Page metadata in the answer (title, description, Open Graph)
              </label>
              <div className="field field-narrow">
                <label htmlFor={ids.cacheTtl}>Cache TTL (seconds)</label>
                <input
                  id={ids.cacheTtl}
                  className="input"
                  type="number"
                  min={0}
                  max={86400}
                  value={options.cacheTtl}
                  onChange={(e) =>
                    set(
                      'cacheTtl',
                      Math.min(86400, Math.max(0, Math.trunc(Number(e.target.value) || 0))),
                    )
                  }
                />
              </div>
            </details>
            <details className="stack">
              <summary>Requests</summary>
              <div className="checks">
                <label className="check">
                  <input
                    type="checkbox"
                    checked={options.blockAds}
                    onChange={(e) => set('blockAds', e.target.checked)}
                  />
                  Block ads
                </label>
                <label className="check">
                  <input
                    type="checkbox"
                    checked={options.blockTrackers}
                    onChange={(e) => set('blockTrackers', e.target.checked)}
                  />
                  Block trackers
                </label>
                <label className="check">
                  <input
                    type="checkbox"
                    checked={options.blockCookieBanners}
                    onChange={(e) => set('blockCookieBanners', e.target.checked)}
                  />
                  Dismiss cookie banners
                </label>
              </div>
              <div className="field">
                <label htmlFor={ids.blockRequests}>Block URLs (one pattern per line)</label>
                <textarea
                  id={ids.blockRequests}
                  className="input input-mono"
                  rows={2}
                  spellCheck={false}
                  placeholder="*://ads.example.com/*"
                  value={options.blockRequests}
                  onChange={(e) => set('blockRequests', e.target.value)}
                />
              </div>
              <fieldset className="stack">
                <legend>Block kinds of request</legend>
                <div className="checks">
                  {RESOURCE_KINDS.map((kind) => (
                    <label key={kind} className="check">
                      <input
                        type="checkbox"
                        checked={options.blockResources.includes(kind)}
                        onChange={(e) =>
                          set(
                            'blockResources',
                            RESOURCE_KINDS.filter((k) =>
                              k === kind ? e.target.checked : options.blockResources.includes(k),
                            ),
                          )
                        }
                      />
                      {kind}
                    </label>
                  ))}
                </div>
              </fieldset>
              <div className="field">
                <label htmlFor={ids.headers}>Headers (Name: value per line)</label>
                <textarea
                  id={ids.headers}
                  className="input input-mono"
                  rows={2}
                  spellCheck={false}
                  placeholder="X-Preview: 1"
                  value={options.headers}
                  onChange={(e) => set('headers', e.target.value)}
                />
              </div>
              <div className="field">
                <label htmlFor={ids.cookies}>Cookies (name=value per line)</label>
                <textarea
                  id={ids.cookies}
                  className="input input-mono"
                  rows={2}
                  spellCheck={false}
                  value={options.cookies}
                  onChange={(e) => set('cookies', e.target.value)}
                />
              </div>
              <div className="field-row">
                <div className="field">
                  <label htmlFor={ids.authUser}>HTTP auth user</label>
                  <input
                    id={ids.authUser}
                    className="input"
                    type="text"
                    autoComplete="off"
                    spellCheck={false}
                    maxLength={256}
                    value={options.authUser}
                    onChange={(e) => set('authUser', e.target.value)}
                  />
                </div>
                <div className="field">
                  <label htmlFor={ids.authPassword}>HTTP auth password</label>
                  <input
                    id={ids.authPassword}
                    className="input"
                    type="password"
                    autoComplete="off"
                    maxLength={256}
                    value={options.authPassword}
                    onChange={(e) => set('authPassword', e.target.value)}
                  />
                </div>
              </div>
            </details>
            <button type="submit" className="btn btn-primary" disabled={busy}>
              {busy ? 'Capturing…' : 'Run capture'}
            </button>
          </form>
        </section>

        <div className="stack">
          <section className="card" aria-labelledby="pg-curl">
            <div className="card-head">
              <h2 id="pg-curl" className="card-title">
                As curl
              </h2>
              <CopyButton
                text={curlCommand(body, trimmedKey || '$SHOTSMITH_KEY')}
                label="Copy command"
              />
            </div>
            <figure className="code-figure" aria-label="The request as a curl command">
              <pre className="code code-wrap">
                <code>{curlCommand(body, shownKey)}</code>
              </pre>
            </figure>
            <p className="field-hint">The copied command includes the full key.</p>
          </section>

          <section className="card" aria-labelledby="pg-result" aria-busy={busy}>
            <h2 id="pg-result" className="card-title">
              Result
            </h2>
            <div role="status" className="visually-hidden">
              {busy ? 'Capturing…' : result ? 'Capture finished.' : ''}
            </div>
            {error && <Notice tone="error">{error}</Notice>}
            {result ? (
              <CaptureOutcome result={result.body} headers={result.headers} stale={busy} />
            ) : (
              <div className="result-placeholder">
                {busy ? (
                  <span className="spinner" aria-hidden="true" />
                ) : (
                  'Run a capture to see the image here.'
                )}
              </div>
            )}
          </section>
        </div>
      </div>
    </>
  );
}

function CaptureOutcome({
  result,
  headers,
  stale,
}: {
  result: CaptureResult;
  headers: Headers;
  stale: boolean;
}) {
  const renderMs = headers.get('X-Render-Time-Ms');
  const remaining = headers.get('X-RateLimit-Remaining');
  return (
    <>
      <a href={result.image_url} target="_blank" rel="noreferrer" className="result-image">
        <img
          src={result.image_url}
          alt={`Capture result, ${result.width}×${result.height} ${result.format.toUpperCase()}`}
          width={result.width}
          height={result.height}
          className={stale ? 'is-stale' : undefined}
        />
      </a>
      <dl className="facts">
        <div>
          <dt>Image</dt>
          <dd>
            {result.format.toUpperCase()}, {result.width}×{result.height}
            {result.truncated ? ' (cut at the height limit)' : ''}
          </dd>
        </div>
        <div>
          <dt>Source</dt>
          <dd>
            {result.cached ? 'From the cache' : 'Rendered'}
            {renderMs && !result.cached ? ` in ${(Number(renderMs) / 1000).toFixed(1)} s` : ''}
          </dd>
        </div>
        <div>
          <dt>Quota</dt>
          <dd>
            {formatNumber(result.quota.used)} of {formatNumber(result.quota.limit)} used this month
          </dd>
        </div>
        {remaining !== null && (
          <div>
            <dt>Rate limit</dt>
            <dd>{remaining} left this minute</dd>
          </div>
        )}
        <div>
          <dt>Kept until</dt>
          <dd>{formatDateTime(result.expires_at)}</dd>
        </div>
      </dl>
      <details>
        <summary>Response body</summary>
        <pre className="code">
          <code>{JSON.stringify(result, null, 2)}</code>
        </pre>
      </details>
      <p className="muted small break">
        Image URL:{' '}
        <a href={result.image_url} target="_blank" rel="noreferrer">
          {shortUrl(result.image_url)}
        </a>
      </p>
    </>
  );
}
