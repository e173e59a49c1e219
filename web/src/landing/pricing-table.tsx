import { useEffect, useState } from 'react';
import { formatPrice, planLabel } from '../shared/format.ts';
import { fetchPlans, PLAN_FACT_ROWS, type Plan, planFacts } from '../shared/plans.ts';

const ORDER = ['demo', 'free', 'pro'];

const BLURB: Record<string, string> = {
  demo: 'The widget on this page, to see the output.',
  free: 'For side projects and trying the API.',
  pro: 'For production: more captures, bigger images, history.',
};

const ACTION: Record<string, { href: string; text: string }> = {
  demo: { href: '#demo', text: 'Try the demo' },
  free: { href: '/dashboard/signup', text: 'Create a free account' },
  pro: { href: '/dashboard/signup', text: 'Start free, upgrade any time' },
};

/**
 * The plans as cards, generated from GET /v1/plans (so operator overrides show). Until the
 * data arrives, cards of the same shape hold the space.
 */
export function PricingTable() {
  const [plans, setPlans] = useState<Plan[] | null>(null);
  const [failed, setFailed] = useState(false);

  useEffect(() => {
    const controller = new AbortController();
    fetchPlans(controller.signal)
      .then((data) =>
        setPlans([...data].sort((a, b) => ORDER.indexOf(a.name) - ORDER.indexOf(b.name))),
      )
      .catch((err: unknown) => {
        if (!(err instanceof DOMException && err.name === 'AbortError')) setFailed(true);
      });
    return () => controller.abort();
  }, []);

  if (failed) {
    return (
      <p className="notice tone-error" role="alert">
        The plans could not be loaded. Reload the page to try again.
      </p>
    );
  }

  return (
    <div className="plans" aria-busy={plans === null}>
      {plans === null
        ? ORDER.map((name) => <PlanSkeleton key={name} />)
        : plans.map((plan) => <PlanCard key={plan.name} plan={plan} />)}
    </div>
  );
}

function PlanCard({ plan }: { plan: Plan }) {
  const titleId = `plan-${plan.name}`;
  const action = ACTION[plan.name];
  return (
    <section
      className={`plan${plan.name === 'pro' ? ' plan-featured' : ''}`}
      aria-labelledby={titleId}
    >
      <h3 id={titleId} className="plan-name">
        {planLabel(plan.name)}
      </h3>
      <p className="plan-price">
        <span className="plan-amount">{formatPrice(plan.price_cents)}</span>
        <span className="muted">
          {' '}
          {plan.name === 'demo'
            ? 'no account needed'
            : plan.price_cents === 0
              ? 'forever'
              : 'per month'}
        </span>
      </p>
      <p className="plan-blurb">{BLURB[plan.name] ?? ''}</p>
      <dl className="plan-facts">
        {planFacts(plan).map((fact) => (
          <div key={fact.label} className="plan-fact">
            <dt>{fact.label}</dt>
            <dd className={fact.available === false ? 'is-no' : undefined}>
              {fact.available !== undefined && (
                <span className="mark" aria-hidden="true">
                  {fact.available ? '✓' : '–'}
                </span>
              )}
              {fact.value}
            </dd>
          </div>
        ))}
      </dl>
      {action && (
        <a
          className={`btn ${plan.name === 'pro' ? 'btn-primary' : 'btn-secondary'} plan-action`}
          href={action.href}
        >
          {action.text}
        </a>
      )}
    </section>
  );
}

function PlanSkeleton() {
  return (
    <div className="plan" aria-hidden="true">
      <div className="plan-name skeleton skeleton-text" />
      <p className="plan-price">
        <span className="plan-amount skeleton skeleton-text">$00</span>
      </p>
      <p className="plan-blurb skeleton skeleton-text">&nbsp;</p>
      <dl className="plan-facts">
        {Array.from({ length: PLAN_FACT_ROWS }, (_, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: a fixed list of placeholders.
          <div key={i} className="plan-fact">
            <dt className="skeleton skeleton-text">&nbsp;</dt>
            <dd className="skeleton skeleton-text">&nbsp;</dd>
          </div>
        ))}
      </dl>
      <span className="btn btn-secondary plan-action skeleton">&nbsp;</span>
    </div>
  );
}
