/**
 * `block_cookie_banners`: DuckDuckGo's autoconsent (its rule set for several hundred consent
 * managers, plus its cosmetic rules and heuristics), run in every document of the capture
 * before the page's own scripts. It finds the consent manager, refuses consent where a choice
 * is offered, and hides the banner's known containers meanwhile (its "prehide"); the capture
 * waits for it to finish, within CONSENT_BUDGET_MS.
 *
 * The package's Playwright bundle expects its host to answer its `init` message with a
 * configuration and the rules; here the host is a few lines in the page itself (below), so
 * nothing of the page ever reaches the service: every rule step runs in the page's own world,
 * which is the page's to spoil, and not even the outcome is read back (consentSettled only
 * waits for it).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** Longest wait for the consent manager to be found and answered after the page loaded. */
export const CONSENT_BUDGET_MS = 3_000;
/**
 * A page where two searches found no consent manager is taken as having none once this long
 * has passed (autoconsent itself searches on only after the page changes, for up to a
 * minute): a banner that comes later from a known manager is still hidden by its prehide.
 */
export const CONSENT_NONE_MS = 1_000;

/** What the page reports in `window.__shotsmithConsent.lifecycle` once autoconsent is done. */
const FINISHED = [
  'nothingDetected',
  'optOutSucceeded',
  'optOutFailed',
  'optInSucceeded',
  'optInFailed',
  'done',
];

const CONFIG = {
  enabled: true,
  autoAction: 'optOut',
  disabledCmps: [],
  enablePrehide: true,
  // Banners stay hidden until the capture is over, even when refusing takes long.
  prehideTimeout: 600_000,
  enableCosmeticRules: true,
  enableGeneratedRules: true,
  enableHeuristicDetection: true,
  heuristicMode: 'tier2',
  enablePopupMutationObserver: false,
  detectRetries: 20,
  isMainWorld: true,
  logs: {
    lifecycle: false,
    rulesteps: false,
    detectionsteps: false,
    evals: false,
    errors: false,
    messages: false,
    waits: false,
  },
};

let source: string | null = null;

/** The script added to every document of a capture with `block_cookie_banners`. */
export function consentScript(): string {
  if (source !== null) return source;
  const require = createRequire(import.meta.url);
  const dist = dirname(require.resolve('@duckduckgo/autoconsent'));
  const bundle = readFileSync(join(dist, 'autoconsent.playwright.js'), 'utf8');
  const rules = readFileSync(require.resolve('@duckduckgo/autoconsent/rules/compact-rules.json'));
  const host = `(() => {
  const state = { lifecycle: 'loading', attempts: 0, detected: 0 };
  Object.defineProperty(window, '__shotsmithConsent', { value: state });
  const config = ${JSON.stringify(CONFIG)};
  const rules = { autoconsent: [], compact: ${rules.toString('utf8')} };
  window.autoconsentSendMessage = (message) => {
    if (message && message.type === 'init') {
      Promise.resolve().then(() =>
        window.autoconsentReceiveMessage({ type: 'initResp', config, rules }));
    } else if (message && message.type === 'report' && message.state) {
      state.lifecycle = String(message.state.lifecycle);
      state.attempts = Number(message.state.findCmpAttempts) || 0;
      state.detected = (message.state.detectedCmps || []).length;
    }
    return Promise.resolve();
  };
})();`;
  source = `${host}\n${bundle}`;
  return source;
}

/**
 * Runs in the page's own world, where autoconsent's state lives: resolves once autoconsent has
 * finished in the top document, has searched twice and found nothing for `noneMs`, or after
 * `budgetMs`. It resolves nothing (the state is the page's to spoil, and the service does not
 * read it) and never throws: a page that replaced the built-ins it uses (timers, `includes`)
 * makes it end early, or late, where the caller's own bound (CONSENT_BUDGET_MS plus
 * CONSENT_GRACE_MS) ends the wait.
 */
export async function consentSettled(args: {
  budgetMs: number;
  noneMs: number;
  finished: string[];
}): Promise<void> {
  try {
    const started = performance.now();
    for (;;) {
      const state = (
        window as unknown as {
          __shotsmithConsent?: { lifecycle: unknown; attempts: unknown; detected: unknown };
        }
      ).__shotsmithConsent;
      if (!state) return;
      const elapsed = performance.now() - started;
      const none = Number(state.attempts) >= 2 && Number(state.detected) === 0;
      if (
        args.finished.includes(String(state.lifecycle)) ||
        (none && elapsed >= args.noneMs) ||
        elapsed >= args.budgetMs
      ) {
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } catch {
    // The page broke what the wait uses: it ends here.
  }
}

/** How long past CONSENT_BUDGET_MS the capture waits for consentSettled to end by itself. */
export const CONSENT_GRACE_MS = 1_000;

export const CONSENT_FINISHED: readonly string[] = FINISHED;
