import { useState } from 'react';
import type { BillingRedirect, Subscription } from '../api/types.ts';
import { ApiError } from '../shared/api.ts';
import { formatDate, formatPrice, formatRelative, planLabel } from '../shared/format.ts';
import { fetchPlans, type Plan, planFacts } from '../shared/plans.ts';
import { useSession } from './session.tsx';
import { Notice, PageTitle, SkeletonText, useResource } from './ui.tsx';

const STATUS_TEXT: Record<Subscription['status'], string> = {
  none: 'No subscription',
  active: 'Active',
  past_due: 'Payment overdue: the payment provider is retrying your card',
  canceled: 'Cancelled',
  incomplete: 'Waiting for the first payment',
  unpaid: 'Unpaid: the subscription ended after failed payments',
};

export function BillingPage() {
  const { call, user } = useSession();
  const subscription = useResource(
    (signal) => call<Subscription>('/v1/billing/subscription', { signal }),
    user.plan,
  );
  const plans = useResource((signal) => fetchPlans(signal));
  const [busy, setBusy] = useState<'checkout' | 'portal' | null>(null);
  const [error, setError] = useState<string | null>(null);
  const sub = subscription.data;
  const pro = plans.data?.find((p) => p.name === 'pro');
  const free = plans.data?.find((p) => p.name === 'free');

  /** Both answer with the provider's page; the browser goes there and comes back later. */
  async function open(kind: 'checkout' | 'portal') {
    setBusy(kind);
    setError(null);
    try {
      const { url } = await call<BillingRedirect>(`/v1/billing/${kind}`, {
        method: 'POST',
        body: {},
      });
      window.location.assign(url);
    } catch (err) {
      setBusy(null);
      setError(
        err instanceof ApiError ? err.message : 'The payment page could not be opened. Try again.',
      );
    }
  }

  const canManage = sub !== null && sub.status !== 'none';
  return (
    <>
      <PageTitle title="Billing">Billing</PageTitle>
      <section
        className="card"
        aria-labelledby="sub-title"
        aria-busy={subscription.loading && !sub}
      >
        <h2 id="sub-title" className="card-title">
          Your subscription
        </h2>
        {subscription.error && !sub && (
          <Notice tone="error">
            {subscription.error}{' '}
            <button type="button" className="btn-link" onClick={subscription.reload}>
              Try again
            </button>
          </Notice>
        )}
        <dl className="facts facts-wide">
          <div>
            <dt>Plan</dt>
            <dd>
              <span className={`badge badge-${sub?.plan ?? user.plan}`}>
                {planLabel(sub?.plan ?? user.plan)}
              </span>
            </dd>
          </div>
          <div>
            <dt>Status</dt>
            <dd>{sub ? STATUS_TEXT[sub.status] : <SkeletonText width={12} />}</dd>
          </div>
          <div>
            <dt>
              {sub?.renews_at ? (sub.cancel_at_period_end ? 'Pro until' : 'Renews on') : 'Renewal'}
            </dt>
            <dd>
              {sub ? (
                sub.renews_at ? (
                  <time dateTime={sub.renews_at} title={formatRelative(sub.renews_at)}>
                    {formatDate(sub.renews_at)}
                    {sub.cancel_at_period_end && ', then Free'}
                  </time>
                ) : (
                  <span className="muted">
                    {sub.plan === 'pro' ? 'Not billed here' : 'Nothing to renew'}
                  </span>
                )
              ) : (
                <SkeletonText width={12} />
              )}
            </dd>
          </div>
        </dl>
        {error && <Notice tone="error">{error}</Notice>}
        <div className="actions">
          {sub && user.plan !== 'pro' && (
            <button
              type="button"
              className="btn btn-primary"
              disabled={busy !== null}
              onClick={() => open('checkout')}
            >
              {busy === 'checkout'
                ? 'Opening checkout…'
                : `Upgrade to Pro${pro ? ` (${formatPrice(pro.price_cents)} per month)` : ''}`}
            </button>
          )}
          {canManage && (
            <button
              type="button"
              className="btn btn-secondary"
              disabled={busy !== null}
              onClick={() => open('portal')}
            >
              {busy === 'portal' ? 'Opening…' : 'Manage subscription'}
            </button>
          )}
          {!sub && <span className="btn skeleton">Upgrade to Pro ($9 per month)</span>}
        </div>
        <p className="field-hint">
          Payments are handled by the payment provider; Shotsmith never sees your card. You can
          cancel at any time and keep Pro until the end of the paid period.
        </p>
      </section>

      <section className="card" aria-labelledby="compare-title">
        <h2 id="compare-title" className="card-title">
          Free and Pro
        </h2>
        {free && pro ? (
          <Comparison free={free} pro={pro} />
        ) : plans.error ? (
          <Notice tone="error">{plans.error}</Notice>
        ) : (
          <div className="comparison-placeholder skeleton" aria-hidden="true" />
        )}
      </section>
    </>
  );
}

/** "1,920×1,080" may wrap after the × in a narrow column. */
const breakable = (text: string) => text.replace('×', '×\u200b');

function Comparison({ free, pro }: { free: Plan; pro: Plan }) {
  const freeFacts = planFacts(free);
  const proFacts = planFacts(pro);
  return (
    <div className="table-scroll">
      <table className="table comparison">
        <caption className="visually-hidden">The Free and Pro plans compared</caption>
        <thead>
          <tr>
            <th scope="col">
              <span className="visually-hidden">Feature</span>
            </th>
            <th scope="col">Free</th>
            <th scope="col">Pro</th>
          </tr>
        </thead>
        <tbody>
          <tr>
            <th scope="row">Price</th>
            <td>{formatPrice(free.price_cents)}</td>
            <td>{formatPrice(pro.price_cents)} / month</td>
          </tr>
          {freeFacts.map((fact, i) => {
            const proValue = proFacts[i]?.value ?? '';
            return (
              <tr key={fact.label}>
                <th scope="row">{fact.label}</th>
                <td>{breakable(fact.value)}</td>
                <td className={proValue !== fact.value ? 'differs' : undefined}>
                  {breakable(proValue)}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
