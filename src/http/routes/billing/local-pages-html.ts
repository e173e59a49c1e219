/**
 * The HTML of the checkout and portal pages, standing in for Stripe's hosted pages
 * (src/http/routes/billing/local-pages.ts serves them with their headers). Forms post back to
 * the same paths; the unguessable id in the path is the capability.
 */
import {
  LOCAL_BILLING_PATH,
  type LocalCheckoutView,
  type LocalPortalView,
} from '../../../domain/billing/ports.ts';

export function checkoutPageHtml(id: string, view: LocalCheckoutView): string {
  return htmlDocument('Checkout', checkoutBody(id, view));
}

export function portalPageHtml(id: string, view: LocalPortalView): string {
  return htmlDocument('Manage subscription', portalBody(id, view));
}

const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const price = (cents: number): string => `$${(cents / 100).toFixed(2)}`;

const day = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

function checkoutBody(id: string, view: LocalCheckoutView): string {
  const base = `${LOCAL_BILLING_PATH}/checkout/${encodeURIComponent(id)}`;
  if (view.status !== 'open') {
    const said =
      view.status === 'complete'
        ? 'This checkout is paid.'
        : 'This checkout was abandoned or has expired.';
    return `<p>${said}</p>`;
  }
  return `<p>Plan: <strong>Pro</strong></p>
<p>Price: <strong>${escapeHtml(price(view.priceCents))} per month</strong></p>
<form method="post" action="${base}/complete"><button type="submit">Pay</button></form>
<form method="post" action="${base}/cancel"><button type="submit">Cancel</button></form>`;
}

function portalBody(id: string, view: LocalPortalView): string {
  const base = `${LOCAL_BILLING_PATH}/portal/${encodeURIComponent(id)}`;
  const back = `<p><a href="${escapeHtml(view.returnUrl)}">Back to the dashboard</a></p>`;
  const sub = view.subscription;
  if (sub?.status !== 'active') return `<p>No active subscription.</p>${back}`;
  const state = sub.cancelAtPeriodEnd
    ? `Pro until ${day(sub.currentPeriodEnd)}, then Free.`
    : `Pro, renews on ${day(sub.currentPeriodEnd)}.`;
  const action = sub.cancelAtPeriodEnd
    ? `<form method="post" action="${base}/resume"><button type="submit">Resume</button></form>`
    : `<form method="post" action="${base}/cancel"><button type="submit">Cancel at period end</button></form>`;
  return `<p>${escapeHtml(state)}</p>${action}${back}`;
}

function htmlDocument(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>${escapeHtml(title)} (local test provider)</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem}
form{display:inline-block;margin-right:.5rem}button{font:inherit;padding:.4rem 1.2rem}
.note{color:#555;font-size:.9em}</style></head>
<body><h1>${escapeHtml(title)}</h1>
<p class="note">Local test provider: no payment is taken. Configure Stripe for real billing.</p>
${body}
</body></html>
`;
}
