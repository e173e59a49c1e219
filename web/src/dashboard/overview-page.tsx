import type { AccountUsage } from '../api/types.ts';
import { formatDate, formatNumber, formatRelative, planLabel } from '../shared/format.ts';
import { Link } from './router.tsx';
import { useSession } from './session.tsx';
import { Notice, PageTitle, SkeletonText, useResource } from './ui.tsx';
import { UsageChart } from './usage-chart.tsx';

export function OverviewPage() {
  const { call, user, createdKeys } = useSession();
  const usage = useResource(
    (signal) => call<AccountUsage>('/v1/account/usage', { signal }),
    user.plan,
  );
  const u = usage.data;

  return (
    <>
      <PageTitle title="Overview">Overview</PageTitle>
      <p className="page-intro">
        Signed in as <strong>{user.email}</strong>.
      </p>
      {usage.error && (
        <Notice tone="error">
          {usage.error}{' '}
          <button type="button" className="btn-link" onClick={usage.reload}>
            Try again
          </button>
        </Notice>
      )}
      <div className="stats" aria-busy={usage.loading && !u}>
        <section className="card stat" aria-labelledby="quota-title">
          <h2 id="quota-title" className="card-title">
            Screenshots this month
          </h2>
          {u ? <QuotaMeter usage={u} /> : <StatSkeleton meter />}
        </section>
        <section className="card stat" aria-labelledby="rate-title">
          <h2 id="rate-title" className="card-title">
            Rate limit
          </h2>
          {u ? (
            <>
              <p className="stat-value">
                {u.rate_limit.limit === null ? 'None' : `${u.rate_limit.limit} per minute`}
              </p>
              <p className="muted">
                {u.rate_limit.remaining === null
                  ? 'For capture requests, across all your keys.'
                  : `${u.rate_limit.remaining} left in the current minute, across all your keys.`}
              </p>
            </>
          ) : (
            <StatSkeleton />
          )}
        </section>
        <section className="card stat" aria-labelledby="plan-title">
          <h2 id="plan-title" className="card-title">
            Plan
          </h2>
          <p className="stat-value">{planLabel(user.plan)}</p>
          <p className="muted">
            {user.plan === 'pro' ? (
              <Link to="/dashboard/billing">Manage billing</Link>
            ) : (
              <>
                <Link to="/dashboard/billing">Upgrade to Pro</Link> for 5,000 screenshots a month.
              </>
            )}
          </p>
        </section>
      </div>

      <section className="card" aria-labelledby="chart-title">
        <h2 id="chart-title" className="card-title">
          Screenshots per day
        </h2>
        {u ? (
          <UsageChart periodStart={u.period_start} resetsAt={u.resets_at} days={u.days} />
        ) : (
          <UsageChart {...currentPeriod()} days={null} />
        )}
      </section>

      <section className="card" aria-labelledby="start-title">
        <h2 id="start-title" className="card-title">
          Getting started
        </h2>
        <ol className="steps">
          <li>
            <Link to="/dashboard/keys">Create an API key</Link> and store it somewhere safe.
          </li>
          <li>
            Run a capture in the <Link to="/dashboard/playground">playground</Link>
            {Object.keys(createdKeys).length > 0 ? ' with the key you just created' : ''}, and copy
            the request as curl.
          </li>
          <li>
            Read the <a href="/docs">API reference</a> for every option and error.
          </li>
        </ol>
      </section>
    </>
  );
}

/** The calendar month (UTC) the usage will be for: the chart's frame before the data. */
function currentPeriod(): { periodStart: string; resetsAt: string } {
  const now = new Date();
  const start = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1);
  const end = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
  return { periodStart: new Date(start).toISOString(), resetsAt: new Date(end).toISOString() };
}

function QuotaMeter({ usage }: { usage: AccountUsage }) {
  const share = usage.limit > 0 ? Math.min(1, usage.used / usage.limit) : 1;
  const level = share >= 1 ? 'is-full' : share >= 0.8 ? 'is-high' : '';
  return (
    <>
      <p className="stat-value">
        {formatNumber(usage.used)} <span className="muted">of {formatNumber(usage.limit)}</span>
      </p>
      <div
        className={`meter ${level}`}
        role="progressbar"
        aria-label="Monthly quota used"
        aria-valuemin={0}
        aria-valuemax={usage.limit}
        aria-valuenow={usage.used}
        aria-valuetext={`${usage.used} of ${usage.limit} screenshots used`}
      >
        <span className="meter-fill" style={{ width: `${share * 100}%` }} />
      </div>
      <p className="muted">
        {formatNumber(usage.remaining)} left · resets on {formatDate(usage.resets_at)} (
        {formatRelative(usage.resets_at)})
      </p>
    </>
  );
}

function StatSkeleton({ meter = false }: { meter?: boolean }) {
  return (
    <div aria-hidden="true">
      <p className="stat-value">
        <SkeletonText width={10} />
      </p>
      {meter && <div className="meter" />}
      <p className="muted">
        <SkeletonText width={30} />
        <br />
        <SkeletonText width={16} />
      </p>
    </div>
  );
}
