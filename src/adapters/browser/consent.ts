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
 * which is the page's to spoil, and the outcome is only read back.
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
 * Runs in the page: resolves once autoconsent has finished in the top document, has searched
 * twice and found nothing for `noneMs`, or after `budgetMs`, with its last lifecycle state
 * ('absent' when it never ran).
 */
export function consentSettled(args: {
  budgetMs: number;
  noneMs: number;
  finished: string[];
}): Promise<string> {
  const started = performance.now();
  return new Promise((resolve) => {
    const check = (): void => {
      const state = (
        window as unknown as {
          __shotsmithConsent?: { lifecycle: string; attempts: number; detected: number };
        }
      ).__shotsmithConsent;
      const lifecycle = state?.lifecycle ?? 'absent';
      const elapsed = performance.now() - started;
      const none = state !== undefined && state.attempts >= 2 && state.detected === 0;
      if (
        !state ||
        args.finished.includes(lifecycle) ||
        (none && elapsed >= args.noneMs) ||
        elapsed >= args.budgetMs
      ) {
        resolve(lifecycle);
        return;
      }
      setTimeout(check, 50);
    };
    check();
  });
}

export const CONSENT_FINISHED: readonly string[] = FINISHED;
