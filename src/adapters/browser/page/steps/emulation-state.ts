/**
 * The emulation a page's session holds, so that a capture sends only what differs from the
 * last one. Chromium keeps an override (viewport, media, user agent, locale, time zone, touch,
 * background, CSP bypass) on the page's session until it is replaced, across navigations and
 * renderer processes; each capture still sets the whole state, but an override equal to the
 * one in place costs no command. Measured on the bench's pages, the seven commands sent anew
 * were about a tenth of the renderer's CPU per capture on a small page.
 *
 * What is remembered is what Chromium accepted: a command that fails is forgotten, and a step
 * that sets an override outside this (pdf.ts, for a single-page PDF) calls forget(). A page
 * whose capture failed is not used again (capture-page.ts), so nothing half-set carries over.
 */
import type { CDPSession, Page, Protocol } from 'puppeteer-core';

/** The commands whose last accepted parameters stand until replaced. */
const STANDING = new Set<string>([
  'Emulation.setDeviceMetricsOverride',
  'Emulation.setEmulatedMedia',
  'Emulation.setDefaultBackgroundColorOverride',
  'Emulation.setUserAgentOverride',
  'Emulation.setLocaleOverride',
  'Emulation.setTimezoneOverride',
  'Emulation.setTouchEmulationEnabled',
  'Emulation.setGeolocationOverride',
  'Page.setBypassCSP',
]);

/** What the options' emulate steps send through (capture-steps.ts emulation()). */
export type EmulationSender = Pick<CDPSession, 'send'>;

export class EmulationState implements EmulationSender {
  readonly #cdp: CDPSession;
  readonly #page: Page | null;
  /** Method -> the parameters Chromium last accepted, as JSON. */
  readonly #standing = new Map<string, string>();

  /**
   * `page`: the user agent override also goes to puppeteer's network manager, which sets it on
   * the session of every out-of-process (cross-site) frame as it attaches, before the frame
   * runs: our own session reaches the page's main target only, and a cross-site frame would
   * otherwise send and report the engine's own user agent.
   */
  constructor(cdp: CDPSession, page: Page | null = null) {
    this.#cdp = cdp;
    this.#page = page;
  }

  readonly send: CDPSession['send'] = (method, ...rest) => {
    if (!STANDING.has(method)) return this.#cdp.send(method, ...rest);
    const params = JSON.stringify(rest[0] ?? {});
    if (this.#standing.get(method) === params) return Promise.resolve({}) as never;
    this.#standing.delete(method);
    const sent = Promise.all([
      this.#cdp.send(method, ...rest),
      method === 'Emulation.setUserAgentOverride' ? this.#frames(rest[0]) : undefined,
    ]);
    return sent.then(([answer]) => {
      this.#standing.set(method, params);
      return answer;
    });
  };

  /** The user agent and client hints for the page's cross-site frames (see the constructor). */
  async #frames(params: unknown): Promise<void> {
    if (this.#page === null) return;
    const { userAgent, userAgentMetadata } = params as {
      userAgent: string;
      userAgentMetadata?: Protocol.Emulation.UserAgentMetadata;
    };
    await this.#page.setUserAgent({
      userAgent,
      ...(userAgentMetadata ? { userAgentMetadata } : {}),
    });
  }

  /** Something set overrides outside this object: the next capture sends everything. */
  forget(): void {
    this.#standing.clear();
  }
}
