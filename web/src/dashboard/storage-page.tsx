import { useState } from 'react';
import type { DestinationList, StorageDestination } from '../api/types.ts';
import { formatDateTime, formatNumber, formatRelative } from '../shared/format.ts';
import { fetchPlans, type Plan } from '../shared/plans.ts';
import { ConfirmDialog } from './confirm-dialog.tsx';
import { Link } from './router.tsx';
import { useSession } from './session.tsx';
import { DestinationForm } from './storage/destination-form.tsx';
import { Notice, PageTitle, SkeletonText, useResource } from './ui.tsx';

/** The table's columns while it loads, with a plausible width each. */
const SKELETON_CELLS: ReadonlyArray<readonly [string, number]> = [
  ['Name', 10],
  ['Bucket', 14],
  ['Endpoint', 12],
  ['Prefix', 8],
  ['Tested', 10],
];

/** What the last Test button said, for one destination. */
type TestOutcome = { id: string; tone: 'success' | 'error'; text: string };

/**
 * Storage: the account's own S3-compatible buckets that captures can be written into
 * (docs/destinations.md), through /v1/account/storage-destinations by session. The list with a test
 * write and a delete for each, and the form that adds one after its test write
 * (storage/destination-form.tsx). A plan without destinations (`storage_destinations` 0) is
 * told what they are and where to get them.
 */
export function StoragePage() {
  const { user } = useSession();
  const plans = useResource((signal) => fetchPlans(signal));
  const plan = plans.data?.find((p) => p.name === user.plan);
  // Until the plans load (or if they cannot), the plan's name decides.
  const allowed = plan ? plan.storage_destinations > 0 : user.plan !== 'free';
  return (
    <>
      <PageTitle title="Storage">Storage</PageTitle>
      <p className="page-intro">
        Write captures into your own bucket: AWS S3, Cloudflare R2, MinIO or any store that speaks
        the S3 API. Name a destination in a capture's <code>storage</code> option (or pick it in the
        playground) and the image lands there too, at the path you choose.
      </p>
      {allowed ? (
        <Destinations plan={plan} />
      ) : (
        <ProOnly pro={plans.data?.find((p) => p.name === 'pro')} />
      )}
    </>
  );
}

function ProOnly({ pro }: { pro: Plan | undefined }) {
  return (
    <section className="card card-feature" aria-labelledby="storage-pro">
      <h2 id="storage-pro" className="card-title">
        Storage destinations are a Pro feature
      </h2>
      <p>
        Your plan has no storage destinations (<code>storage_destinations</code> 0), so there is
        nothing to add here yet.
      </p>
      <p>
        On Pro you keep up to{' '}
        {pro ? formatNumber(pro.storage_destinations) : <SkeletonText width={2} />} buckets of your
        own. Each capture that names one is written there as well as hosted here, or only there.
      </p>
      <p>
        <Link to="/dashboard/billing" className="btn btn-primary">
          Upgrade to Pro
        </Link>
      </p>
    </section>
  );
}

function Destinations({ plan }: { plan: Plan | undefined }) {
  const { call } = useSession();
  const listing = useResource((signal) =>
    call<DestinationList>('/v1/account/storage-destinations', { signal }),
  );
  const [message, setMessage] = useState<string | null>(null);
  const [testing, setTesting] = useState<string | null>(null);
  const [tested, setTested] = useState<TestOutcome | null>(null);
  const [deleting, setDeleting] = useState<StorageDestination | null>(null);
  const [deleteBusy, setDeleteBusy] = useState(false);
  const [deleteError, setDeleteError] = useState<string | null>(null);

  const list = listing.data?.data ?? null;
  const atLimit = plan !== undefined && list !== null && list.length >= plan.storage_destinations;

  async function test(d: StorageDestination) {
    setTesting(d.id);
    setTested(null);
    try {
      await call<StorageDestination>(
        `/v1/account/storage-destinations/${encodeURIComponent(d.id)}/test`,
        {
          method: 'POST',
        },
      );
      setTested({
        id: d.id,
        tone: 'success',
        text: `The test write into “${d.name}” succeeded: the bucket took an object and deleted it again.`,
      });
      listing.reload();
    } catch (err) {
      setTested({
        id: d.id,
        tone: 'error',
        text: `The test of “${d.name}” failed. ${err instanceof Error ? err.message : ''}`.trim(),
      });
    } finally {
      setTesting(null);
    }
  }

  async function remove() {
    if (!deleting) return;
    setDeleteBusy(true);
    setDeleteError(null);
    try {
      await call(`/v1/account/storage-destinations/${encodeURIComponent(deleting.id)}`, {
        method: 'DELETE',
      });
      setMessage(
        `The destination “${deleting.name}” is deleted. What it holds stays in the bucket; captures that name it are refused from now on.`,
      );
      if (tested?.id === deleting.id) setTested(null);
      setDeleting(null);
      listing.reload();
    } catch (err) {
      setDeleteError(err instanceof Error ? err.message : 'The destination could not be deleted.');
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

      <section className="card" aria-labelledby="storage-new">
        <h2 id="storage-new" className="card-title">
          Add a destination
        </h2>
        {atLimit ? (
          <p className="muted">
            You have {formatNumber(list?.length ?? 0)} of{' '}
            {formatNumber(plan?.storage_destinations ?? 0)} destinations, the most your plan keeps.
            Delete one to add another.
          </p>
        ) : (
          <DestinationForm
            onCreated={(d) => {
              setMessage(
                `The destination “${d.name}” is added: a test object was written into ${d.bucket} and deleted again.`,
              );
              listing.reload();
            }}
          />
        )}
      </section>

      <section className="card" aria-labelledby="storage-list" aria-busy={listing.loading && !list}>
        <h2 id="storage-list" className="card-title">
          Your destinations{' '}
          {list && plan && (
            <span className="muted">
              ({formatNumber(list.length)} of {formatNumber(plan.storage_destinations)})
            </span>
          )}
        </h2>
        {listing.error && !list && (
          <Notice tone="error">
            {listing.error}{' '}
            <button type="button" className="btn-link" onClick={listing.reload}>
              Try again
            </button>
          </Notice>
        )}
        {tested && (
          <Notice tone={tested.tone} onDismiss={() => setTested(null)}>
            {tested.text}
          </Notice>
        )}
        {list && list.length === 0 ? (
          <p className="empty">No destinations yet. Add one above to write captures into it.</p>
        ) : (
          <table className="table table-stack">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Bucket</th>
                <th scope="col">Endpoint</th>
                <th scope="col">Prefix</th>
                <th scope="col">Tested</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {list
                ? list.map((d) => (
                    <DestinationRow
                      key={d.id}
                      destination={d}
                      testing={testing === d.id}
                      onTest={() => test(d)}
                      onDelete={() => {
                        setDeleteError(null);
                        setDeleting(d);
                      }}
                    />
                  ))
                : [0, 1].map((i) => (
                    <tr key={i}>
                      {SKELETON_CELLS.map(([label, w]) => (
                        <td key={label} data-label={label}>
                          <SkeletonText width={w} />
                        </td>
                      ))}
                      <td className="cell-actions">
                        <span className="btn btn-small skeleton" aria-hidden="true">
                          Delete
                        </span>
                      </td>
                    </tr>
                  ))}
            </tbody>
          </table>
        )}
      </section>

      <ConfirmDialog
        open={deleting !== null}
        title="Delete this destination?"
        confirmLabel="Delete destination"
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
            <strong>{deleting.name}</strong> (<code>{deleting.bucket}</code>) is forgotten at once,
            its credentials with it, and captures that name it are refused. The objects already in
            the bucket stay there.
          </p>
        )}
      </ConfirmDialog>
    </>
  );
}

function DestinationRow({
  destination: d,
  testing,
  onTest,
  onDelete,
}: {
  destination: StorageDestination;
  testing: boolean;
  onTest: () => void;
  onDelete: () => void;
}) {
  return (
    <tr>
      <td data-label="Name">
        {d.name}
        <br />
        <code className="muted small">{d.id}</code>
      </td>
      <td data-label="Bucket">
        <code>{d.bucket}</code>
        {d.acl === 'public-read' && <span className="muted"> (public read)</span>}
      </td>
      <td data-label="Endpoint" className="cell-wrap">
        {d.endpoint ? <code>{d.endpoint}</code> : `AWS S3 (${d.region})`}
      </td>
      <td data-label="Prefix">
        {d.prefix ? <code>{d.prefix}/</code> : <span className="muted">None</span>}
      </td>
      <td data-label="Tested">
        <time dateTime={d.tested_at} title={formatDateTime(d.tested_at)}>
          {formatRelative(d.tested_at)}
        </time>
      </td>
      <td className="cell-actions">
        <button
          type="button"
          className="btn btn-secondary btn-small"
          onClick={onTest}
          disabled={testing}
          aria-label={`Test ${d.name}`}
        >
          {testing ? 'Testing…' : 'Test'}
        </button>{' '}
        <button
          type="button"
          className="btn btn-danger-outline btn-small"
          onClick={onDelete}
          aria-label={`Delete ${d.name}`}
        >
          Delete
        </button>
      </td>
    </tr>
  );
}
