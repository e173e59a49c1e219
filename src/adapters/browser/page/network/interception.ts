/**
 * Who pauses the page's requests, and how each paused one is answered. A capture whose options
 * have request rules (request-rules.ts decides, per request) turns puppeteer's interception on:
 * every paused request is blocked, or let go with the headers meant for its target. For the
 * other captures, on the full browser, our own session's Fetch pauses every request only to
 * cancel authentication challenges, and lets it go at once; the headless shell cancels them
 * by itself (docs/engine.md), so there nothing is paused but a document capture's own
 * addresses. Either way a request is paused once. A document capture (`html`, `markdown`) is
 * answered here too: its main-frame navigation gets the document.
 */
import type { CDPSession, HTTPRequest, Page } from 'puppeteer-core';
import { DOCUMENT_URL } from '../../../../domain/captures/capture-target.ts';
import type { RenderOptions } from '../../../../domain/captures/renderer.ts';
import { AppError } from '../../../../domain/errors.ts';
import { noop } from '../../../../lib/abort.ts';
import type { Engine } from '../../process/engine.ts';
import { markdownPage } from '../in-page/markdown-page.ts';
import type { FilterLists } from './filter-lists.ts';
import { isMainDocument, withoutFragment } from './network-watch.ts';
import { type RequestMatcher, type RequestRules, requestRulesFor } from './request-rules.ts';

/**
 * Where a document capture's document is answered: its address without the fragment, as
 * Chromium requests it; null for a capture of a page fetched from its URL.
 */
export function documentAddress(o: RenderOptions): string | null {
  if (o.html === null && o.markdown === null) return null;
  const url = new URL(o.url);
  url.hash = '';
  return url.href;
}

const PLACEHOLDER_ORIGIN = new URL(DOCUMENT_URL).origin;

/** What the browser answers itself for a document capture, per request. */
type DocumentVerdict = 'document' | 'refuse' | null;

/** A document capture's own answers, decided per request (null: not this capture's business). */
interface DocumentAnswers {
  address: string;
  html: string;
  base64: string;
}

function documentVerdict(
  doc: DocumentAnswers | null,
  url: string,
  mainDocument: boolean,
): DocumentVerdict {
  if (doc === null) return null;
  if (mainDocument && withoutFragment(url) === doc.address) return 'document';
  // The placeholder's name never resolves: refused here, so no lookup is even tried for it.
  if (url.startsWith(`${PLACEHOLDER_ORIGIN}/`)) return 'refuse';
  return null;
}

const DOCUMENT_HEADERS = [{ name: 'Content-Type', value: 'text/html; charset=utf-8' }];

/** Our own session's Fetch: every request, for its authentication challenges only. */
const AUTH_ONLY_FETCH = { handleAuthRequests: true, patterns: [{ urlPattern: '*' }] };

/** A URL as a Fetch pattern that matches it alone (`*` and `?` are wildcards, `\` escapes). */
function exactPattern(url: string): string {
  return url.replace(/[\\*?]/g, (c) => `\\${c}`);
}

/** Our own session's Fetch.enable parameters. */
interface OwnFetch {
  handleAuthRequests: boolean;
  patterns: { urlPattern: string }[];
}

/**
 * What our own session's Fetch pauses for a capture without request rules: every request on an
 * engine that waits on challenges; on one that cancels them, a document capture's document and
 * placeholder. `keep` (the shell, a capture of a URL): whatever the last capture left, so that
 * captures taking turns send no Fetch command each; a request a stale pattern pauses is not a
 * document of this capture's (the document is null), so it is let go at once.
 */
function ownFetch(engine: Engine, doc: DocumentAnswers | null): OwnFetch | 'keep' {
  if (engine === 'full') return AUTH_ONLY_FETCH;
  if (doc === null) return 'keep';
  return {
    handleAuthRequests: false,
    patterns: [
      { urlPattern: exactPattern(doc.address) },
      { urlPattern: `${exactPattern(PLACEHOLDER_ORIGIN)}/*` },
    ],
  };
}

export class RequestInterception {
  readonly #page: Page;
  readonly #cdp: CDPSession;
  readonly #lists: FilterLists | undefined;
  readonly #engine: Engine;
  /** Our own session's Fetch as last sent (JSON; null: disabled). */
  #fetch: string | null = null;
  /** The request filter of the last capture that had one (see apply). */
  #rules: RequestRules | null = null;
  /** Whether Chromium pauses the page's requests for #rules (only while a capture needs it). */
  #intercepting = false;
  /** The document of the capture in progress, if it carried one (see apply). */
  #document: DocumentAnswers | null = null;

  /** `engine`: whether the browser cancels authentication challenges itself (the shell). */
  constructor(parts: {
    page: Page;
    cdp: CDPSession;
    lists: FilterLists | undefined;
    engine: Engine;
  }) {
    this.#page = parts.page;
    this.#cdp = parts.cdp;
    this.#lists = parts.lists;
    this.#engine = parts.engine;
  }

  /**
   * Once, when the page is made: our session's handlers, and on the full browser its Fetch on,
   * its challenges cancelled. An HTTP authentication challenge is cancelled, as a person
   * cancels the login prompt: the request ends with its 401 and the capture goes on. The full
   * browser in headless mode would otherwise wait for an answer no one gives, and the capture
   * with it until its deadline. Chromium only reports a challenge for a request it paused, so
   * while this session's Fetch is on (every capture without request rules; with rules,
   * puppeteer's interception answers, see apply) each request is let go at once, one round
   * trip to this process. The headless shell cancels challenges itself: no pause there.
   */
  start(): Promise<unknown> {
    const cdp = this.#cdp;
    cdp.on('Fetch.requestPaused', (event) => {
      const { requestId } = event;
      const mainDocument =
        event.resourceType === 'Document' && event.frameId === this.#mainFrameId();
      const verdict = documentVerdict(this.#document, event.request.url, mainDocument);
      const answer =
        verdict === 'document'
          ? cdp.send('Fetch.fulfillRequest', {
              requestId,
              responseCode: 200,
              responseHeaders: DOCUMENT_HEADERS,
              body: this.#document?.base64 ?? '',
            })
          : verdict === 'refuse'
            ? cdp.send('Fetch.failRequest', { requestId, errorReason: 'BlockedByClient' })
            : cdp.send('Fetch.continueRequest', { requestId });
      answer.catch(noop);
    });
    cdp.on('Fetch.authRequired', (event) => {
      cdp
        .send('Fetch.continueWithAuth', {
          requestId: event.requestId,
          authChallengeResponse: { response: 'CancelAuth' },
        })
        .catch(noop);
    });
    return this.#ownFetch(ownFetch(this.#engine, null));
  }

  /** Our own session's Fetch set to `wanted` (null: off; keep: as it is), sent on a change. */
  async #ownFetch(wanted: OwnFetch | 'keep' | null): Promise<void> {
    if (wanted === 'keep') return;
    const key = wanted === null ? null : JSON.stringify(wanted);
    if (key === this.#fetch) return;
    this.#fetch = null;
    if (wanted === null) await this.#cdp.send('Fetch.disable');
    else await this.#cdp.send('Fetch.enable', wanted);
    this.#fetch = key;
  }

  /**
   * The capture's request filter. puppeteer's interception is turned on only for captures
   * whose options need it, and off again for the next one that does not; our own session's
   * (start) is on whenever puppeteer's is off, so a request is paused once.
   */
  async apply(o: RenderOptions): Promise<void> {
    const address = documentAddress(o);
    const html = o.html ?? (o.markdown === null ? null : markdownPage(o.markdown));
    // Encoded once per capture: a document that reloads itself is answered from this.
    this.#document =
      address === null || html === null
        ? null
        : { address, html, base64: Buffer.from(html).toString('base64') };
    this.#rules = requestRulesFor(o, await this.#listMatchers(o));
    const wanted = this.#rules !== null;
    const own = wanted ? null : ownFetch(this.#engine, this.#document);
    if (wanted === this.#intercepting) {
      await this.#ownFetch(own);
      return;
    }
    await Promise.all([
      // With interception on, puppeteer answers a challenge before our session can (it
      // answers with "Default", which the full browser never completes). With (empty)
      // credentials set it answers with those once, then cancels, and the request ends
      // with its 401. The target's own credentials (http_auth) go as a header instead,
      // to its origin only, so they never answer another origin's challenge.
      this.#page.authenticate(wanted ? { username: '', password: '' } : null),
      this.#page.setRequestInterception(wanted),
      this.#ownFetch(own),
    ]);
    this.#intercepting = wanted;
  }

  /** The page's main frame id (puppeteer keeps it as `_id`), for the paused requests' frameId. */
  #mainFrameId(): string | undefined {
    const id = (this.#page.mainFrame() as unknown as { _id?: unknown })._id;
    return typeof id === 'string' ? id : undefined;
  }

  async #listMatchers(o: RenderOptions): Promise<RequestMatcher[]> {
    const names = [...(o.blockAds ? ['ads'] : []), ...(o.blockTrackers ? ['trackers'] : [])];
    if (names.length === 0) return [];
    const lists = this.#lists;
    if (!lists) throw new AppError('internal_error', 'the filter lists are not available');
    return Promise.all(
      names.map(async (name) => (await lists.get(name as 'ads' | 'trackers')).matches),
    );
  }

  /**
   * A paused request (only while a capture's options need the filter): blocked, or let go
   * with the headers meant for the target. Every paused request is answered, whatever else
   * happens, or the page would wait for it forever.
   */
  answer(request: HTTPRequest): void {
    if (request.interceptResolutionState().action !== 'none') return;
    const mainDocument = isMainDocument(this.#page, request);
    const own = documentVerdict(this.#document, request.url(), mainDocument);
    if (own !== null) {
      const answered =
        own === 'document'
          ? request.respond({
              status: 200,
              headers: { 'content-type': DOCUMENT_HEADERS[0]?.value ?? '' },
              body: this.#document?.html ?? '',
            })
          : request.abort('blockedbyclient');
      answered.catch(noop);
      return;
    }
    const verdict = this.#rules?.decide({
      url: request.url(),
      resourceType: request.resourceType(),
      mainDocument,
      sourceUrl: request.frame()?.url() ?? '',
    }) ?? { block: false, headers: null };
    let answer: Promise<void>;
    if (verdict.block) {
      answer = request.abort('blockedbyclient');
    } else if (verdict.headers === null) {
      answer = request.continue();
    } else {
      const names = new Set(Object.keys(verdict.headers).map((n) => n.toLowerCase()));
      const kept = Object.entries(request.headers()).filter(([n]) => !names.has(n.toLowerCase()));
      answer = request.continue({ headers: { ...Object.fromEntries(kept), ...verdict.headers } });
    }
    answer.catch(noop); // the page or the request is gone
  }
}
