import { useId, useState } from 'react';
import type { JsonBody } from '../api/types.ts';
import { CopyButton } from '../shared/copy-button.tsx';
import { formatDateTime, formatRelative, shortUrl } from '../shared/format.ts';
import { ConfirmDialog } from './confirm-dialog.tsx';
import { useSession } from './session.tsx';
import { Notice, PageTitle, SkeletonText, useResource } from './ui.tsx';

type Deliveries = JsonBody<'/v1/webhooks/deliveries', 'get', 200>;
type Delivery = Deliveries['data'][number];
type Attempts = JsonBody<'/v1/webhooks/deliveries/{id}/attempts', 'get', 200>;
type Secret = JsonBody<'/v1/webhooks/secret', 'get', 200>;

/** The table's columns while it loads, with a plausible width each. */
const SKELETON_CELLS: ReadonlyArray<readonly [string, number]> = [
  ['Event', 12],
  ['Endpoint', 16],
  ['Status', 8],
  ['Attempts', 4],
  ['Last error', 14],
  ['Actions', 6],
];

const STATUS_LABELS: Record<Delivery['status'], string> = {
  pending: 'Retrying',
  delivered: 'Delivered',
  failed: 'Failed',
  gone: 'Stopped (410)',
};

/**
 * Webhooks: the signing secret (shown, copied, rotated) and every delivery with its status,
 * attempts and last error, each with its attempts on demand and a resend button.
 */
export function WebhooksPage() {
  return (
    <>
      <PageTitle title="Webhooks">Webhooks</PageTitle>
      <p className="page-intro">
        Async captures (<code>"async": true</code> with a <code>webhook_url</code>) POST their
        result here when they finish, signed the Standard Webhooks way. Verify each delivery with
        this secret and deduplicate on its <code>webhook-id</code>: a delivery that gets no 2xx is
        retried with the same id for about a day.
      </p>
      <SecretCard />
      <DeliveriesCard />
    </>
  );
}

function SecretCard() {
  const { call } = useSession();
  const secret = useResource((signal) => call<Secret>('/v1/webhooks/secret', { signal }));
  const [shown, setShown] = useState(false);
  const [rotating, setRotating] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  /** The secret the rotation answered with: shown at once, with the notice that says so. */
  const [replaced, setReplaced] = useState<Secret | null>(null);
  const inputId = useId();

  async function rotate() {
    setBusy(true);
    setError(null);
    try {
      setReplaced(await call<Secret>('/v1/webhooks/secret/rotate', { method: 'POST' }));
      setRotating(false);
      setShown(true);
      setMessage('The secret is replaced: deliveries from now on are signed with the new one.');
    } catch (err) {
      setError(err instanceof Error ? err.message : 'The secret could not be replaced.');
    } finally {
      setBusy(false);
    }
  }

  const value = replaced?.secret ?? secret.data?.secret ?? '';
  return (
    <section className="card" aria-labelledby="secret-title" aria-busy={secret.loading}>
      <h2 id="secret-title" className="card-title">
        Signing secret
      </h2>
      {secret.error && !secret.data && <Notice tone="error">{secret.error}</Notice>}
      {message && (
        <Notice tone="success" onDismiss={() => setMessage(null)}>
          {message}
        </Notice>
      )}
      <div className="key-reveal">
        <label htmlFor={inputId} className="visually-hidden">
          Webhook signing secret
        </label>
        {secret.data ? (
          <input
            id={inputId}
            className="input input-mono"
            readOnly
            type={shown ? 'text' : 'password'}
            value={value}
            onFocus={(e) => e.currentTarget.select()}
          />
        ) : (
          <SkeletonText width={30} />
        )}
        <button type="button" className="btn btn-secondary" onClick={() => setShown((s) => !s)}>
          {shown ? 'Hide' : 'Show'}
        </button>
        <CopyButton text={value} label="Copy secret" />
        <button
          type="button"
          className="btn btn-danger-outline"
          onClick={() => {
            setError(null);
            setRotating(true);
          }}
        >
          Rotate
        </button>
      </div>
      <ConfirmDialog
        open={rotating}
        title="Rotate the webhook secret?"
        confirmLabel="Rotate secret"
        busy={busy}
        error={error}
        onConfirm={rotate}
        onCancel={() => setRotating(false)}
      >
        <p>
          Every delivery from now on, retries of earlier ones included, is signed with a new secret.
          Receivers that still check the old one will refuse them until you update them.
        </p>
      </ConfirmDialog>
    </section>
  );
}

function DeliveriesCard() {
  const { call } = useSession();
  const deliveries = useResource((signal) =>
    call<Deliveries>('/v1/webhooks/deliveries', { signal }),
  );
  const [open, setOpen] = useState<string | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);

  async function resend(delivery: Delivery) {
    setError(null);
    try {
      await call(`/v1/webhooks/deliveries/${delivery.id}/resend`, { method: 'POST' });
      setMessage(`Delivery ${delivery.id} is queued to be sent again.`);
      deliveries.reload();
    } catch (err) {
      setError(err instanceof Error ? err.message : 'The delivery could not be queued.');
    }
  }

  const list = deliveries.data?.data ?? null;
  return (
    <section className="card" aria-labelledby="deliveries-title" aria-busy={deliveries.loading}>
      <h2 id="deliveries-title" className="card-title">
        Deliveries{' '}
        <button type="button" className="btn-link" onClick={deliveries.reload}>
          Refresh
        </button>
      </h2>
      {message && (
        <Notice tone="success" onDismiss={() => setMessage(null)}>
          {message}
        </Notice>
      )}
      {error && <Notice tone="error">{error}</Notice>}
      {deliveries.error && !list && <Notice tone="error">{deliveries.error}</Notice>}
      {list && list.length === 0 ? (
        <p className="empty">
          No deliveries yet. Queue a capture with <code>"async": true</code> and a{' '}
          <code>webhook_url</code> to see it here.
        </p>
      ) : (
        <table className="table table-stack">
          <thead>
            <tr>
              <th scope="col">Event</th>
              <th scope="col">Endpoint</th>
              <th scope="col">Status</th>
              <th scope="col">Attempts</th>
              <th scope="col">Last error</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {list
              ? list.map((d) => (
                  <DeliveryRow
                    key={d.id}
                    delivery={d}
                    open={open === d.id}
                    onToggle={() => setOpen(open === d.id ? null : d.id)}
                    onResend={() => resend(d)}
                  />
                ))
              : [0, 1].map((i) => (
                  <tr key={i}>
                    {SKELETON_CELLS.map(([label, w]) => (
                      <td key={label} data-label={label}>
                        <SkeletonText width={w} />
                      </td>
                    ))}
                  </tr>
                ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function DeliveryRow({
  delivery: d,
  open,
  onToggle,
  onResend,
}: {
  delivery: Delivery;
  open: boolean;
  onToggle: () => void;
  onResend: () => void;
}) {
  return (
    <>
      <tr>
        <td data-label="Event">
          <code>{d.event_type}</code>
          <br />
          <time className="muted" dateTime={d.created_at} title={formatDateTime(d.created_at)}>
            {formatRelative(d.created_at)}
          </time>
        </td>
        <td data-label="Endpoint" className="cell-wrap">
          {shortUrl(d.url)}
        </td>
        <td data-label="Status">
          {STATUS_LABELS[d.status]}
          {d.status === 'pending' && d.next_attempt_at && (
            <span className="muted"> (next {formatRelative(d.next_attempt_at)})</span>
          )}
        </td>
        <td data-label="Attempts">{d.attempts}</td>
        <td data-label="Last error" className="cell-wrap">
          {d.last_error ? <code>{d.last_error}</code> : <span className="muted">None</span>}
        </td>
        <td className="cell-actions">
          <button
            type="button"
            className="btn btn-secondary btn-small"
            aria-expanded={open}
            onClick={onToggle}
            aria-label={`Attempts of ${d.id}`}
          >
            Attempts
          </button>{' '}
          <button
            type="button"
            className="btn btn-secondary btn-small"
            onClick={onResend}
            aria-label={`Resend ${d.id}`}
          >
            Resend
          </button>
        </td>
      </tr>
      {open && (
        <tr>
          <td colSpan={6} className="cell-wrap">
            <AttemptList id={d.id} />
          </td>
        </tr>
      )}
    </>
  );
}

function AttemptList({ id }: { id: string }) {
  const { call } = useSession();
  const attempts = useResource(
    (signal) => call<Attempts>(`/v1/webhooks/deliveries/${id}/attempts`, { signal }),
    id,
  );
  if (attempts.error) return <Notice tone="error">{attempts.error}</Notice>;
  if (!attempts.data) return <SkeletonText width={30} />;
  return (
    <ol className="attempts" aria-label={`Attempts of ${id}`}>
      {attempts.data.data.map((a) => (
        <li key={a.attempted_at}>
          <time dateTime={a.attempted_at}>{formatDateTime(a.attempted_at)}</time>:{' '}
          {a.status_code === null ? 'no answer' : `HTTP ${a.status_code}`} in {a.duration_ms} ms
          {a.error ? (
            <>
              {' '}
              (<code>{a.error}</code>)
            </>
          ) : null}
        </li>
      ))}
    </ol>
  );
}
