import { type FormEvent, useId, useState } from 'react';
import type { Monitor, RunStarted } from '../../api/types.ts';
import { formatDateTime, formatRelative } from '../../shared/format.ts';
import type { Plan } from '../../shared/plans.ts';
import { Link } from '../router.tsx';
import { useSession } from '../session.tsx';
import { Notice } from '../ui.tsx';
import {
  editOf,
  everyLabel,
  formatShare,
  type MonitorEdit,
  monitorLabel,
  parseThreshold,
  STATUS_LABELS,
  THRESHOLD_MAX_PERCENT,
  THRESHOLD_MIN_PERCENT,
  updateBody,
} from './monitor-body.ts';
import { MonitorFields } from './monitor-fields.tsx';
import { RunTimeline } from './run-timeline.tsx';

/**
 * One monitor: what it watches, its state in words (a paused one says why and offers Resume),
 * when it ran and last changed, and its actions: Run now, Pause or Resume, Edit, Runs (the
 * timeline, opened by Run now too), Delete (the parent's confirm dialog).
 */
export function MonitorCard({
  monitor: m,
  plan,
  onChanged,
  onDelete,
}: {
  monitor: Monitor;
  plan: Plan | undefined;
  /** The monitor changed here: the list reads it again. */
  onChanged(): void;
  onDelete(): void;
}) {
  const { call } = useSession();
  const label = monitorLabel(m);
  const [editing, setEditing] = useState(false);
  const [timeline, setTimeline] = useState(false);
  const [started, setStarted] = useState<string | null>(null);
  const [busy, setBusy] = useState<'run' | 'status' | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const headingId = useId();
  const editId = useId();
  const base = `/v1/account/monitors/${encodeURIComponent(m.id)}`;

  async function act(kind: 'run' | 'status', work: () => Promise<string>) {
    setBusy(kind);
    setError(null);
    setMessage(null);
    try {
      setMessage(await work());
    } catch (err) {
      setError(err instanceof Error ? err.message : 'That did not work. Try again.');
    } finally {
      setBusy(null);
    }
  }

  const runNow = () =>
    act('run', async () => {
      const run = await call<RunStarted>(`${base}/run`, { method: 'POST' });
      setTimeline(true);
      setStarted(run.id);
      return 'A run started; the timeline shows it when it ends.';
    });

  const setStatus = (status: 'active' | 'paused') =>
    act('status', async () => {
      await call<Monitor>(base, { method: 'PATCH', body: { status } });
      onChanged();
      return status === 'active'
        ? 'Resumed: it runs again at its next slot.'
        : 'Paused: no scheduled runs until you resume it.';
    });

  const paused = m.status !== 'active';
  return (
    <li className="monitor card" aria-labelledby={headingId}>
      <div className="monitor-head">
        <h3 id={headingId} className="monitor-name">
          {label}
        </h3>
        <span className={`badge badge-status-${m.status}`}>{STATUS_LABELS[m.status]}</span>
      </div>
      <p className="monitor-target muted small break">
        {m.url && /^https?:\/\//i.test(m.url) ? (
          <a href={m.url} target="_blank" rel="noreferrer">
            {m.url}
          </a>
        ) : (
          (m.url ?? 'An HTML document')
        )}
      </p>
      {m.status === 'paused_quota' ? (
        <Notice tone="warning" live="none">
          This month's captures are used up, so the monitor paused itself instead of failing at
          every run. Resume it once your quota resets (see the <Link to="/dashboard">overview</Link>
          ); it then runs again at its next slot.{' '}
          <ResumeButton label={label} busy={busy} onResume={() => setStatus('active')} />
        </Notice>
      ) : m.status === 'paused' ? (
        <Notice tone="info" live="none">
          Paused: no scheduled runs until it is resumed. Run now still works.{' '}
          <ResumeButton label={label} busy={busy} onResume={() => setStatus('active')} />
        </Notice>
      ) : null}
      <dl className="facts monitor-facts">
        <div>
          <dt>Schedule</dt>
          <dd>
            {everyLabel(m.every)}
            {!paused && (
              <span className="muted">
                {' '}
                (next{' '}
                <time dateTime={m.next_run_at} title={formatDateTime(m.next_run_at)}>
                  {formatRelative(m.next_run_at)}
                </time>
                )
              </span>
            )}
          </dd>
        </div>
        <div>
          <dt>Last run</dt>
          <dd>
            <When iso={m.last_run_at} never="Never" />
          </dd>
        </div>
        <div>
          <dt>Last change</dt>
          <dd>
            <When iso={m.last_change_at} never="None yet" />
          </dd>
        </div>
        <div>
          <dt>Threshold</dt>
          <dd>{formatShare(m.threshold)} of the pixels</dd>
        </div>
      </dl>
      {message && (
        <Notice tone="success" onDismiss={() => setMessage(null)}>
          {message}
        </Notice>
      )}
      {error && <Notice tone="error">{error}</Notice>}
      <div className="monitor-actions">
        <button
          type="button"
          className="btn btn-primary btn-small"
          onClick={runNow}
          disabled={busy !== null}
        >
          {busy === 'run' ? 'Starting…' : 'Run now'}
          <span className="visually-hidden"> {label}</span>
        </button>
        {m.status === 'active' && (
          <button
            type="button"
            className="btn btn-secondary btn-small"
            onClick={() => setStatus('paused')}
            disabled={busy !== null}
          >
            Pause<span className="visually-hidden"> {label}</span>
          </button>
        )}
        <button
          type="button"
          className="btn btn-secondary btn-small"
          aria-expanded={editing}
          aria-controls={editing ? editId : undefined}
          onClick={() => setEditing((e) => !e)}
        >
          Edit<span className="visually-hidden"> {label}</span>
        </button>
        <button
          type="button"
          className="btn btn-secondary btn-small"
          aria-expanded={timeline}
          onClick={() => setTimeline((t) => !t)}
        >
          Runs<span className="visually-hidden"> of {label}</span>
        </button>
        <button type="button" className="btn btn-danger-outline btn-small" onClick={onDelete}>
          Delete<span className="visually-hidden"> {label}</span>
        </button>
      </div>
      {editing && (
        <EditMonitorForm
          id={editId}
          monitor={m}
          plan={plan}
          onSaved={(words) => {
            setEditing(false);
            setMessage(words);
            onChanged();
          }}
          onCancel={() => setEditing(false)}
        />
      )}
      {timeline && (
        <RunTimeline
          monitor={m}
          started={started}
          onRunEnded={() => {
            setMessage(null);
            onChanged();
          }}
        />
      )}
    </li>
  );
}

function ResumeButton({
  label,
  busy,
  onResume,
}: {
  label: string;
  busy: string | null;
  onResume(): void;
}) {
  return (
    <button
      type="button"
      className="btn btn-secondary btn-small"
      onClick={onResume}
      disabled={busy !== null}
    >
      {busy === 'status' ? 'Resuming…' : 'Resume'}
      <span className="visually-hidden"> {label}</span>
    </button>
  );
}

function When({ iso, never }: { iso: string | null; never: string }) {
  if (iso === null) return <span className="muted">{never}</span>;
  return (
    <time dateTime={iso} title={formatDateTime(iso)}>
      {formatRelative(iso)}
    </time>
  );
}

/** Name, interval, threshold and webhook of a monitor; only what changed is sent. */
function EditMonitorForm({
  id,
  monitor,
  plan,
  onSaved,
  onCancel,
}: {
  id: string;
  monitor: Monitor;
  plan: Plan | undefined;
  onSaved(message: string): void;
  onCancel(): void;
}) {
  const { call } = useSession();
  const [values, setValues] = useState<MonitorEdit>(() => editOf(monitor));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const set = <K extends keyof MonitorEdit>(name: K, value: MonitorEdit[K]) =>
    setValues((v) => ({ ...v, [name]: value }));

  async function submit(event: FormEvent) {
    event.preventDefault();
    if (parseThreshold(values.thresholdPercent) === null) {
      setError(
        `The change threshold is a share of the pixels from ${THRESHOLD_MIN_PERCENT}% to ${THRESHOLD_MAX_PERCENT}%.`,
      );
      return;
    }
    const body = updateBody(monitor, values);
    if (Object.keys(body).length === 0) {
      onSaved('Nothing to save: no field was changed.');
      return;
    }
    setBusy(true);
    setError(null);
    try {
      await call<Monitor>(`/v1/account/monitors/${encodeURIComponent(monitor.id)}`, {
        method: 'PATCH',
        body,
      });
      onSaved('Changes saved.');
    } catch (err) {
      setError(err instanceof Error ? err.message : 'The changes could not be saved.');
    } finally {
      setBusy(false);
    }
  }

  return (
    <form
      id={id}
      className="stack monitor-edit"
      onSubmit={submit}
      noValidate
      aria-label={`Edit ${monitorLabel(monitor)}`}
    >
      <MonitorFields values={values} set={set} plan={plan} />
      {error && <Notice tone="error">{error}</Notice>}
      <div className="actions">
        <button type="submit" className="btn btn-primary btn-small" disabled={busy}>
          {busy ? 'Saving…' : 'Save changes'}
        </button>
        <button
          type="button"
          className="btn btn-secondary btn-small"
          onClick={onCancel}
          disabled={busy}
        >
          Cancel
        </button>
      </div>
    </form>
  );
}
