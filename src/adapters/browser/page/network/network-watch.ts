/**
 * The capture's network, read from the page's own events: the requests in flight (for the
 * settle wait), the main document's answers and its redirects, the egress proxy's refusals,
 * and a check of every main-frame navigation before it is followed. Listening adds no
 * protocol traffic: puppeteer's session for the page already receives these events. Between
 * captures the events count for nothing (no run).
 */
import type { CDPSession, HTTPRequest, HTTPResponse, Page } from 'puppeteer-core';
import { AppError, isAppError } from '../../../../domain/errors.ts';
import { noop } from '../../../../lib/abort.ts';
import type { CaptureRun } from '../capture-run.ts';

/**
 * A URL as Chromium requests it, without its fragment (puppeteer's request URL carries it; a
 * `#` is always the fragment's start in a parsed URL).
 */
export const withoutFragment = (url: string): string => {
  const at = url.indexOf('#');
  return at === -1 ? url : url.slice(0, at);
};

/** Whether a request is a navigation of the page's main frame (its document). */
export function isMainDocument(page: Page, request: HTTPRequest): boolean {
  return request.isNavigationRequest() && request.frame() === page.mainFrame();
}

/**
 * The favicon Chromium fetches by itself once a page has loaded (type "other", initiated by
 * nothing in the page). It never shows in the image, so the settle wait does not wait for it:
 * it used to turn the short quiet window after load into the long one (NETWORK_QUIET_ACTIVE_MS)
 * on most first visits of an origin. It still goes through the egress proxy like any request.
 */
function isBrowserFavicon(request: HTTPRequest): boolean {
  return (
    request.resourceType() === 'other' &&
    request.initiator()?.type === 'other' &&
    !request.isNavigationRequest()
  );
}

/**
 * Chromium's network request id of a request: puppeteer 24 keeps it as `id` (typed internal);
 * redirect hops share it, as they share one in-flight slot.
 */
function requestId(request: HTTPRequest): string {
  const id = (request as unknown as { id?: unknown }).id;
  if (typeof id !== 'string') throw new Error('puppeteer request without an id');
  return id;
}

export class NetworkWatch {
  readonly #page: Page;
  readonly #checkNavigation: ((url: URL) => Promise<void>) | undefined;
  /** The capture in progress, if any. */
  readonly #run: () => CaptureRun | null;
  readonly #watched = new WeakSet<CDPSession>();

  constructor(
    page: Page,
    checkNavigation: ((url: URL) => Promise<void>) | undefined,
    run: () => CaptureRun | null,
  ) {
    this.#page = page;
    this.#checkNavigation = checkNavigation;
    this.#run = run;
  }

  requestStarted(request: HTTPRequest): void {
    const run = this.#run();
    if (!run || isBrowserFavicon(request)) return;
    run.requestStarted(requestId(request), request);
    if (isMainDocument(this.#page, request)) {
      this.#watchRedirects(request.client);
      this.#checkMainDocument(run, request);
    }
  }

  requestDone(request: HTTPRequest): void {
    const run = this.#run();
    if (!run || isBrowserFavicon(request)) return;
    run.requestEnded(requestId(request));
  }

  /**
   * The main frame's load event, seen in order with the network events: a request the load
   * handlers started is in flight here even when it ends before goto() resolves.
   */
  loaded(): void {
    const run = this.#run();
    if (!run) return;
    run.loadEventFired();
  }

  responded(response: HTTPResponse): void {
    const run = this.#run();
    const request = response.request();
    if (!run || isBrowserFavicon(request)) return;
    run.responseReceived();
    if (!isMainDocument(this.#page, request)) return;
    run.mainDocumentAnswered(response);
    const headers = response.headers();
    // The egress proxy's own marks: only a plain-http answer can carry them (it strips them
    // from what it forwards); an https answer comes from inside a tunnel, from the target.
    const marks = response.url().startsWith('http:') ? headers : {};
    const refused = marks['x-egress-refused'];
    if (refused !== undefined && response.status() === 403) {
      // The egress proxy's refusal of a plain-http target (it answers 403 with this header).
      run.fail(new AppError('url_not_allowed', `the target is not allowed: ${refused}`));
      return;
    }
    const proxyFailure = marks['x-egress-proxy-error'];
    if (proxyFailure !== undefined && response.status() === 502) {
      // The upstream proxy of the capture's lane failed (docs/proxies.md).
      run.fail(new AppError('proxy_error', proxyFailure.slice(0, 200)));
      return;
    }
    if (marks['x-egress-error'] === 'unreachable' && response.status() === 502) {
      // The proxy's own 502 (it could not connect), not a page of the target.
      const host = new URL(response.url()).host;
      run.fail(
        new AppError('target_unreachable', `could not reach ${host}: the connection failed`),
      );
      return;
    }
    if (/^\s*attachment/i.test(headers['content-disposition'] ?? ''))
      run.markDownload('attachment');
    // The headless shell has no PDF viewer: it turns a PDF document into a denied download.
    else if (/^\s*application\/pdf\b/i.test(headers['content-type'] ?? '')) run.markDownload('pdf');
  }

  /**
   * A redirect to javascript: or mailto: never becomes a request: Chromium just aborts the
   * navigation. Its Location is only visible in the raw response headers, which puppeteer's
   * own session for the page already receives (listening adds no protocol traffic). It is
   * only consulted when the main navigation fails with ERR_ABORTED, that is before the main
   * document commits, when the only responses are those of its own redirect chain.
   */
  #watchRedirects(client: CDPSession): void {
    if (this.#watched.has(client)) return;
    this.#watched.add(client);
    client.on('Network.responseReceivedExtraInfo', (event) => {
      const run = this.#run();
      if (!run || event.statusCode < 300 || event.statusCode > 399) return;
      const location = Object.entries(event.headers).find(
        ([k]) => k.toLowerCase() === 'location',
      )?.[1];
      let target: URL;
      try {
        target = new URL(String(location));
      } catch {
        return; // relative: same scheme as the response
      }
      if (target.protocol !== 'http:' && target.protocol !== 'https:') {
        run.markUnsafeRedirect(target.protocol.slice(0, -1).slice(0, 32));
      }
    });
  }

  #checkMainDocument(run: CaptureRun, request: HTTPRequest): void {
    let url: URL;
    try {
      url = new URL(request.url());
    } catch {
      run.fail(new AppError('url_not_allowed', 'the page navigated to an invalid URL'));
      return;
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      const redirect = request.redirectChain().length > 0;
      // about:, blob: and data: documents fetch nothing; anything else, or any redirect off
      // http(s), is refused (Chromium blocks most of these itself, with ERR_UNSAFE_REDIRECT).
      const harmless =
        url.protocol === 'about:' || url.protocol === 'blob:' || url.protocol === 'data:';
      if (redirect || !harmless) {
        const scheme = url.protocol.slice(0, -1).slice(0, 32);
        run.fail(new AppError('url_not_allowed', `the page was redirected to a ${scheme}: URL`));
      }
      return;
    }
    const check = this.#checkNavigation;
    // A document the request carried, answered by the browser at its address: nothing fetched.
    if (!check || withoutFragment(request.url()) === run.documentUrl) return;
    const pending = check(url).then(noop, (err: unknown) => {
      run.fail(
        isAppError(err)
          ? err
          : new AppError('internal_error', 'the navigation check failed', { cause: err }),
      );
    });
    run.addCheck(pending);
  }
}
