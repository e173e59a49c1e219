import { parse as parseForm } from 'node:querystring';
import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { LOCAL_BILLING_PATH, type LocalBilling } from '../../adapters/billing/local-provider.ts';
import type { AppDeps } from '../../deps.ts';
import { AppError } from '../../domain/errors.ts';
import type { App } from '../types.ts';

/**
 * The local billing provider's checkout and portal pages (registered only when it is the
 * provider in use). They stand in for Stripe's hosted pages, so they talk to the provider
 * adapter directly rather than to a domain use case. The unguessable id in the path is the
 * capability: no cookie, and the POSTs take an empty body, JSON or a form.
 */
export function registerLocalBillingPages(app: App, deps: AppDeps): void {
  const local = deps.billing.local;
  if (!local) return;
  const dashboard = new URL(deps.billing.ctx.returnUrls.success).origin;
  const params = Type.Object({ id: Type.String({ maxLength: 100 }) });
  const schema = { hide: true, params };

  app.register(async (scope: App) => {
    // HTML forms post x-www-form-urlencoded; only these routes accept it (400 elsewhere).
    scope.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string' },
      (_request, body, done) => done(null, parseForm(String(body))),
    );

    scope.get(`${LOCAL_BILLING_PATH}/checkout/:id`, { schema }, async (request, reply) => {
      const view = await local.viewCheckout(request.params.id);
      if (!view) throw new AppError('not_found', 'no such checkout');
      return sendPage(reply, dashboard, 'Checkout', checkoutBody(request.params.id, view));
    });
    scope.post(`${LOCAL_BILLING_PATH}/checkout/:id/complete`, { schema }, async (request, reply) =>
      reply.redirect(await local.completeCheckout(request.params.id), 303),
    );
    scope.post(`${LOCAL_BILLING_PATH}/checkout/:id/cancel`, { schema }, async (request, reply) =>
      reply.redirect(await local.abandonCheckout(request.params.id), 303),
    );

    scope.get(`${LOCAL_BILLING_PATH}/portal/:id`, { schema }, async (request, reply) => {
      const view = await local.viewPortal(request.params.id);
      if (!view) throw new AppError('not_found', 'no such portal session, or it has expired');
      return sendPage(reply, dashboard, 'Manage subscription', portalBody(request.params.id, view));
    });
    for (const [action, cancel] of [
      ['cancel', true],
      ['resume', false],
    ] as const) {
      scope.post(
        `${LOCAL_BILLING_PATH}/portal/:id/${action}`,
        { schema },
        async (request, reply) => {
          await local.setCancelAtPeriodEnd(request.params.id, cancel);
          return reply.redirect(`${LOCAL_BILLING_PATH}/portal/${request.params.id}`, 303);
        },
      );
    }
  });
}

type CheckoutView = NonNullable<Awaited<ReturnType<LocalBilling['viewCheckout']>>>;
type PortalView = NonNullable<Awaited<ReturnType<LocalBilling['viewPortal']>>>;

const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const price = (cents: number): string => `$${(cents / 100).toFixed(2)}`;

const day = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

function checkoutBody(id: string, view: CheckoutView): string {
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

function portalBody(id: string, view: PortalView): string {
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

function sendPage(
  reply: FastifyReply,
  dashboard: string,
  title: string,
  body: string,
): FastifyReply {
  return (
    reply
      .header('Content-Type', 'text/html; charset=utf-8')
      .header('Cache-Control', 'no-store')
      // The URL is a capability: keep it out of Referer headers, frames and caches.
      .header('Referrer-Policy', 'no-referrer')
      .header('X-Frame-Options', 'DENY')
      .header(
        'Content-Security-Policy',
        `default-src 'none'; style-src 'unsafe-inline'; form-action 'self' ${dashboard}; ` +
          "frame-ancestors 'none'; base-uri 'none'",
      )
      .send(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>${escapeHtml(title)} (local test provider)</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem}
form{display:inline-block;margin-right:.5rem}button{font:inherit;padding:.4rem 1.2rem}
.note{color:#555;font-size:.9em}</style></head>
<body><h1>${escapeHtml(title)}</h1>
<p class="note">Local test provider: no payment is taken. Configure Stripe for real billing.</p>
${body}
</body></html>
`)
  );
}
