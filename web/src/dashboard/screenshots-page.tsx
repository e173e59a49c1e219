import { useState } from 'react';
import type { ScreenshotItem, ScreenshotPage } from '../api/types.ts';
import { formatDateTime, formatRelative, shortUrl } from '../shared/format.ts';
import { ConfirmDialog } from './confirm-dialog.tsx';
import { Link } from './router.tsx';
import { useSession } from './session.tsx';
import { MoreButton, Notice, PageTitle, SkeletonText, useCursorPages } from './ui.tsx';

export function ScreenshotsPage() {
  const { user } = useSession();
  return (
    <>
      <PageTitle title="Screenshots">Screenshots</PageTitle>
      {user.plan === 'pro' ? <History /> : <ProOnly />}
    </>
  );
}

function ProOnly() {
  return (
    <section className="card card-feature" aria-labelledby="history-pro">
      <h2 id="history-pro" className="card-title">
        Screenshot history is a Pro feature
      </h2>
      <p>
        On the Free plan captures are not recorded: each image stays at its URL for 7 days, but it
        cannot be listed here, looked up later or deleted before it expires.
      </p>
      <p>
        On Pro every capture is kept for 30 days with its options, listed here and through{' '}
        <code>GET /v1/screenshots</code>, and can be deleted at any time, image included.
      </p>
      <p>
        <Link to="/dashboard/billing" className="btn btn-primary">
          Upgrade to Pro
        </Link>
      </p>
    </section>
  );
}

function History() {
  const { call } = useSession();
  const listing = useCursorPages<ScreenshotItem>((cursor, signal) =>
    call<ScreenshotPage>(
      `/v1/account/screenshots?limit=24${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      { signal },
    ),
  );
  const { first } = listing;
  const [deleted, setDeleted] = useState<Set<number>>(new Set());
  const [deleting, setDeleting] = useState<ScreenshotItem | null>(null);
  const [deleteBusy, setDeleteBusy] = useState(false);
  const [deleteError, setDeleteError] = useState<string | null>(null);
  const [message, setMessage] = useState<string | null>(null);

  const items = listing.items.filter((s) => !deleted.has(s.id));

  async function remove() {
    if (!deleting) return;
    setDeleteBusy(true);
    setDeleteError(null);
    try {
      await call(`/v1/account/screenshots/${deleting.id}`, { method: 'DELETE' });
      setDeleted((d) => new Set(d).add(deleting.id));
      setMessage(`The screenshot of ${shortUrl(deleting.url)} is deleted, image included.`);
      setDeleting(null);
    } catch (err) {
      setDeleteError(err instanceof Error ? err.message : 'The screenshot could not be deleted.');
    } finally {
      setDeleteBusy(false);
    }
  }

  return (
    <>
      <p className="page-intro">
        Your captures of the last 30 days, newest first. Images are deleted automatically when they
        expire.
      </p>
      {message && (
        <Notice tone="success" onDismiss={() => setMessage(null)}>
          {message}
        </Notice>
      )}
      {first.error && (
        <Notice tone="error">
          {first.error}{' '}
          <button type="button" className="btn-link" onClick={listing.reload}>
            Try again
          </button>
        </Notice>
      )}
      {first.data && items.length === 0 ? (
        <p className="empty card">
          No screenshots yet. Captures made with your keys appear here for 30 days; try the{' '}
          <Link to="/dashboard/playground">playground</Link>.
        </p>
      ) : (
        <ul className="shots" aria-busy={first.loading && !first.data}>
          {first.data
            ? items.map((shot) => (
                <ShotCard key={shot.id} shot={shot} onDelete={() => setDeleting(shot)} />
              ))
            : [0, 1, 2].map((i) => <ShotSkeleton key={i} />)}
        </ul>
      )}
      {listing.hasMore && (
        <p className="center">
          <MoreButton busy={listing.moreBusy} onClick={listing.loadMore} />
        </p>
      )}
      {listing.moreError && <Notice tone="error">{listing.moreError}</Notice>}

      <ConfirmDialog
        open={deleting !== null}
        title="Delete this screenshot?"
        confirmLabel="Delete screenshot"
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
            The record and the image of <strong>{shortUrl(deleting.url)}</strong> are removed at
            once. The image URL stops working, also where you shared it.
          </p>
        )}
      </ConfirmDialog>
    </>
  );
}

function ShotCard({ shot, onDelete }: { shot: ScreenshotItem; onDelete: () => void }) {
  const options = [
    shot.format.toUpperCase(),
    `${shot.width}×${shot.height} px`,
    shot.full_page ? 'full page' : null,
    shot.format === 'png' ? null : `quality ${shot.quality}`,
    shot.device_scale_factor !== 1 ? `${shot.device_scale_factor}× scale` : null,
  ].filter(Boolean);
  return (
    <li className="shot">
      <a className="shot-thumb" href={shot.image_url} target="_blank" rel="noreferrer">
        <img src={shot.image_url} alt={`Screenshot of ${shortUrl(shot.url)}`} loading="lazy" />
      </a>
      <div className="shot-body">
        <p className="shot-url" title={shot.url}>
          {shortUrl(shot.url)}
        </p>
        <p className="muted small">{options.join(' · ')}</p>
        <p className="muted small">
          Taken{' '}
          <time dateTime={shot.created_at} title={formatDateTime(shot.created_at)}>
            {formatRelative(shot.created_at)}
          </time>
          , expires{' '}
          <time dateTime={shot.expires_at} title={formatDateTime(shot.expires_at)}>
            {formatRelative(shot.expires_at)}
          </time>
        </p>
      </div>
      <div className="shot-actions">
        <a
          className="btn btn-secondary btn-small"
          href={shot.image_url}
          target="_blank"
          rel="noreferrer"
        >
          Open
          <span className="visually-hidden"> the image of {shortUrl(shot.url)}</span>
        </a>
        <button type="button" className="btn btn-danger-outline btn-small" onClick={onDelete}>
          Delete
          <span className="visually-hidden"> the screenshot of {shortUrl(shot.url)}</span>
        </button>
      </div>
    </li>
  );
}

function ShotSkeleton() {
  return (
    <li className="shot" aria-hidden="true">
      <div className="shot-thumb skeleton" />
      <div className="shot-body">
        <p className="shot-url">
          <SkeletonText width={22} />
        </p>
        <p className="small">
          <SkeletonText width={18} />
        </p>
        <p className="small">
          <SkeletonText width={26} />
        </p>
      </div>
      <div className="shot-actions">
        <span className="btn btn-small skeleton">Open</span>
        <span className="btn btn-small skeleton">Delete</span>
      </div>
    </li>
  );
}
