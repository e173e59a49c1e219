import type { BatchResult, CaptureResult } from '../../api/types.ts';
import { formatDateTime, formatNumber, shortUrl } from '../../shared/format.ts';
import { Notice } from '../ui.tsx';
import type { CaptureAnswer } from './use-playground.ts';

/**
 * The capture's answer: the image, the facts about it (source, quota, rate limit, retention,
 * where a storage destination put it) and the response body; the previous answer stays, dimmed, while the next one runs.
 */
export function ResultCard({
  busy,
  error,
  result,
  batch,
}: {
  busy: boolean;
  error: string | null;
  result: CaptureAnswer | null;
  batch: BatchResult | null;
}) {
  return (
    <section className="card" aria-labelledby="pg-result" aria-busy={busy}>
      <h2 id="pg-result" className="card-title">
        Result
      </h2>
      <div role="status" className="visually-hidden">
        {busy ? 'Capturing…' : result ? 'Capture finished.' : ''}
      </div>
      {error && <Notice tone="error">{error}</Notice>}
      {batch ? (
        <BatchOutcome batch={batch} />
      ) : result ? (
        <CaptureOutcome result={result.body} headers={result.headers} stale={busy} />
      ) : (
        <div className="result-placeholder">
          {busy ? (
            <span className="spinner" aria-hidden="true" />
          ) : (
            'Run a capture to see the image here.'
          )}
        </div>
      )}
    </section>
  );
}

function CaptureOutcome({
  result,
  headers,
  stale,
}: {
  result: CaptureResult;
  headers: Headers;
  stale: boolean;
}) {
  const renderMs = headers.get('X-Render-Time-Ms');
  const remaining = headers.get('X-RateLimit-Remaining');
  return (
    <>
      {result.image_url ? (
        <a href={result.image_url} target="_blank" rel="noreferrer" className="result-image">
          <img
            src={result.image_url}
            alt={`Capture result, ${result.width}×${result.height} ${result.format.toUpperCase()}`}
            width={result.width}
            height={result.height}
            className={stale ? 'is-stale' : undefined}
          />
        </a>
      ) : (
        <Notice tone="info" live="none">
          No copy is kept here (<code>hosted: false</code>): the image is in your bucket only.
        </Notice>
      )}
      <dl className="facts">
        <div>
          <dt>Image</dt>
          <dd>
            {result.format.toUpperCase()}, {result.width}×{result.height}
            {result.truncated ? ' (cut at the height limit)' : ''}
          </dd>
        </div>
        <div>
          <dt>Source</dt>
          <dd>
            {result.cached ? 'From the cache' : 'Rendered'}
            {renderMs && !result.cached ? ` in ${(Number(renderMs) / 1000).toFixed(1)} s` : ''}
          </dd>
        </div>
        <div>
          <dt>Quota</dt>
          <dd>
            {formatNumber(result.quota.used)} of {formatNumber(result.quota.limit)} used this month
          </dd>
        </div>
        {remaining !== null && (
          <div>
            <dt>Rate limit</dt>
            <dd>{remaining} left this minute</dd>
          </div>
        )}
        {result.image_url && (
          <div>
            <dt>Kept until</dt>
            <dd>{formatDateTime(result.expires_at)}</dd>
          </div>
        )}
        {result.storage && (
          <div>
            <dt>Your bucket</dt>
            <dd className="break">
              <code>{result.storage.bucket}</code>, key <code>{result.storage.key}</code>
              <br />
              <a href={result.storage.location} target="_blank" rel="noreferrer">
                {shortUrl(result.storage.location)}
              </a>
            </dd>
          </div>
        )}
        {result.content && (
          <div>
            <dt>Content{result.content_truncated ? ' (cut at 5 MiB)' : ''}</dt>
            <dd>
              {Object.entries(result.content).map(([kind, url]) => (
                <a key={kind} href={url} target="_blank" rel="noreferrer" className="content-link">
                  {kind}
                </a>
              ))}
            </dd>
          </div>
        )}
        {result.warnings.length > 0 && (
          <div>
            <dt>Warnings</dt>
            <dd>
              <ul className="warnings">
                {result.warnings.map((w) => (
                  <li key={w.code}>
                    <code>{w.code}</code>: {w.message}
                  </li>
                ))}
              </ul>
            </dd>
          </div>
        )}
      </dl>
      <details>
        <summary>Response body</summary>
        <pre className="code">
          <code>{JSON.stringify(result, null, 2)}</code>
        </pre>
      </details>
      {result.image_url && (
        <p className="muted small break">
          Image URL:{' '}
          <a href={result.image_url} target="_blank" rel="noreferrer">
            {shortUrl(result.image_url)}
          </a>
        </p>
      )}
    </>
  );
}

/** A batch's jobs as they end, read again until every one has. */
function BatchOutcome({ batch }: { batch: BatchResult }) {
  const ended = batch.succeeded + batch.failed;
  return (
    <>
      <p>
        Batch <code>{batch.batch_id}</code>: {ended} of {batch.total} ended
        {batch.failed > 0 ? ` (${batch.failed} failed)` : ''}
        {batch.status === 'completed' ? '.' : '…'}
      </p>
      <ol className="batch-jobs">
        {batch.jobs.map((job) => (
          <li key={job.id}>
            <code>{job.status}</code>{' '}
            {job.status === 'succeeded' && typeof job.image_url === 'string' ? (
              <a href={job.image_url} target="_blank" rel="noreferrer">
                {shortUrl(job.image_url)}
              </a>
            ) : job.status === 'failed' && 'error' in job ? (
              <span className="muted">{String(job.error)}</span>
            ) : (
              <span className="muted">{job.id}</span>
            )}
          </li>
        ))}
      </ol>
    </>
  );
}
