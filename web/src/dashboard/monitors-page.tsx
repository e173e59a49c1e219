import { useId, useState } from 'react';
import type { Monitor, MonitorPage } from '../api/types.ts';
import { fetchDevices } from '../shared/devices.ts';
import { formatNumber } from '../shared/format.ts';
import { fetchPlans, type Plan } from '../shared/plans.ts';
import { ConfirmDialog } from './confirm-dialog.tsx';
import { CreateMonitorForm } from './monitors/create-monitor-form.tsx';
import { monitorLabel } from './monitors/monitor-body.ts';
import { MonitorCard } from './monitors/monitor-card.tsx';
import { Link } from './router.tsx';
import { useSession } from './session.tsx';
import { MoreButton, Notice, PageTitle, SkeletonText, useCursorPages, useResource } from './ui.tsx';

/** Monitors a page of the list holds (the API's largest page). */
const PAGE_SIZE = 100;

/**
 * Monitors: scheduled captures of a page, each compared with the last (docs/api.md,
 * "Monitors"), through the session routes /v1/account/monitors. The list with each monitor's
 * state and timeline (monitors/monitor-card.tsx, run-timeline.tsx, before-after.tsx) and a
 * create form built from the playground's fields (monitors/create-monitor-form.tsx). A plan
 * without monitors (max_monitors 0) is told what they are and where to get them.
 */
export function MonitorsPage() {
  const { user } = useSession();
  const plans = useResource((signal) => fetchPlans(signal));
  const plan = plans.data?.find((p) => p.name === user.plan);
  // Until the plans load (or if they cannot), the plan's name decides.
  const allowed = plan ? plan.max_monitors > 0 : user.plan !== 'free';
  return (
    <>
      <PageTitle title="Monitors">Monitors</PageTitle>
      <p className="page-intro">
        A monitor captures a page on a schedule and compares each capture with the one before: you
        see what changed, pixel by pixel, and can be told by webhook.
      </p>
      {allowed ? (
        <Monitors plan={plan} />
      ) : (
        <ProOnly pro={plans.data?.find((p) => p.name === 'pro')} />
      )}
    </>
  );
}

function ProOnly({ pro }: { pro: Plan | undefined }) {
  return (
    <section className="card card-feature" aria-labelledby="monitors-pro">
      <h2 id="monitors-pro" className="card-title">
        Monitors are a Pro feature
      </h2>
      <p>
        Your plan has no monitors (<code>max_monitors</code> 0), so there is nothing to create here
        yet.
      </p>
      <p>
        On Pro you keep up to {pro ? formatNumber(pro.max_monitors) : <SkeletonText width={2} />}{' '}
        monitors, run as often as every{' '}
        {pro ? `${pro.min_monitor_interval} minutes` : <SkeletonText width={10} />} and up to once a
        week. Each run is one capture of your month; a changed run shows the page before and after
        with the changed pixels marked, and can send a signed <code>monitor.changed</code> webhook.
      </p>
      <p>
        <Link to="/dashboard/billing" className="btn btn-primary">
          Upgrade to Pro
        </Link>
      </p>
    </section>
  );
}

function Monitors({ plan }: { plan: Plan | undefined }) {
  const { call, user } = useSession();
  const devices = useResource((signal) => fetchDevices(signal));
  const listing = useCursorPages<Monitor>((cursor, signal) =>
    call<MonitorPage>(
      `/v1/account/monitors?limit=${PAGE_SIZE}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      { signal },
    ),
  );
  const { first, items: monitors, reload } = listing;
  const [creating, setCreating] = useState<boolean | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const [deleting, setDeleting] = useState<Monitor | null>(null);
  const [deleteBusy, setDeleteBusy] = useState(false);
  const [deleteError, setDeleteError] = useState<string | null>(null);
  const formId = useId();

  const atLimit = plan !== undefined && !listing.hasMore && monitors.length >= plan.max_monitors;
  // With no monitors yet the form is open: it is the page's one thing to do.
  const formOpen = !atLimit && (creating ?? (first.data !== null && monitors.length === 0));

  async function remove() {
    if (!deleting) return;
    setDeleteBusy(true);
    setDeleteError(null);
    try {
      await call(`/v1/account/monitors/${encodeURIComponent(deleting.id)}`, { method: 'DELETE' });
      setMessage(`The monitor “${monitorLabel(deleting)}” is deleted, with its runs.`);
      setDeleting(null);
      reload();
    } catch (err) {
      setDeleteError(err instanceof Error ? err.message : 'The monitor could not be deleted.');
    } finally {
      setDeleteBusy(false);
    }
  }

  return (
    <>
      {message && (
        <Notice tone="success" onDismiss={() => setMessage(null)}>
          {message}
        </Notice>
      )}
      {first.error && (
        <Notice tone="error">
          {first.error}{' '}
          <button type="button" className="btn-link" onClick={first.reload}>
            Try again
          </button>
        </Notice>
      )}
      {listing.moreError && <Notice tone="error">{listing.moreError}</Notice>}

      <section className="card monitor-create" aria-labelledby="monitor-new">
        <div className="card-head">
          <h2 id="monitor-new" className="card-title">
            New monitor
          </h2>
          {first.data && monitors.length > 0 && !atLimit && (
            <button
              type="button"
              className="btn btn-secondary btn-small"
              aria-expanded={formOpen}
              aria-controls={formOpen ? formId : undefined}
              onClick={() => setCreating(!formOpen)}
            >
              {formOpen ? 'Close' : 'Create a monitor'}
            </button>
          )}
        </div>
        {atLimit ? (
          <p className="muted">
            You have {formatNumber(monitors.length)} of {formatNumber(plan?.max_monitors ?? 0)}{' '}
            monitors, the most your plan keeps. Delete one to add another.
          </p>
        ) : formOpen ? (
          <div id={formId}>
            <CreateMonitorForm
              plan={plan}
              pro={user.plan === 'pro'}
              devices={devices.data ?? []}
              onCreated={(m) => {
                setCreating(false);
                setMessage(
                  `The monitor “${monitorLabel(m)}” is created. Its first run is due at its next slot; Run now starts one at once.`,
                );
                reload();
              }}
              {...(monitors.length > 0 ? { onCancel: () => setCreating(false) } : {})}
            />
          </div>
        ) : (
          <p className="muted">
            Watch another page: its address, the capture options as in the playground, how often and
            how much change counts.
          </p>
        )}
      </section>

      <section aria-labelledby="monitor-list" aria-busy={first.loading && !first.data}>
        <h2 id="monitor-list" className="section-title">
          Your monitors
          {first.data && plan && (
            <span className="muted small">
              {' '}
              {formatNumber(monitors.length)} of {formatNumber(plan.max_monitors)}
            </span>
          )}
        </h2>
        {first.data && monitors.length === 0 ? (
          <p className="empty card">No monitors yet. Create one with the form above.</p>
        ) : (
          <ul className="monitors">
            {first.data ? (
              monitors.map((m) => (
                <MonitorCard
                  key={m.id}
                  monitor={m}
                  plan={plan}
                  onChanged={reload}
                  onDelete={() => {
                    setDeleteError(null);
                    setDeleting(m);
                  }}
                />
              ))
            ) : (
              <li className="monitor card" aria-hidden="true">
                <p>
                  <SkeletonText width={20} />
                </p>
                <p>
                  <SkeletonText width={40} />
                </p>
              </li>
            )}
          </ul>
        )}
        {listing.hasMore && (
          <p className="center">
            <MoreButton busy={listing.moreBusy} onClick={listing.loadMore} />
          </p>
        )}
      </section>

      <ConfirmDialog
        open={deleting !== null}
        title="Delete this monitor?"
        confirmLabel="Delete monitor"
        busy={deleteBusy}
        error={deleteError}
        onConfirm={remove}
        onCancel={() => {
          setDeleteError(null);
          setDeleting(null);
        }}
      >
        {deleting && (
          <p>
            <strong>{monitorLabel(deleting)}</strong> stops running at once, and its timeline of
            runs goes with it. Images it already took expire as your plan keeps them.
          </p>
        )}
      </ConfirmDialog>
    </>
  );
}
