import { useEffect, useId, useRef, useState } from 'react';
import type { Monitor, MonitorRun, RunPage } from '../../api/types.ts';
import { formatDateTime, formatRelative } from '../../shared/format.ts';
import { useSession } from '../session.tsx';
import { MoreButton, Notice, SkeletonText } from '../ui.tsx';
import { BeforeAfter } from './before-after.tsx';
import { formatShare, previousSuccess } from './monitor-body.ts';

/** Runs a page of the timeline holds, and the most one read of it asks for (the API's bound). */
const PAGE_SIZE = 10;
const MAX_PAGE_SIZE = 100;
/** How often the newest runs are read again while one is running, and for how long at most. */
const POLL_MS = 1_500;
const POLL_MAX_MS = 5 * 60_000;

/**
 * A monitor's runs, newest first: a changed run with its before and after (BeforeAfter), a
 * failed run with its error, "Show older runs" for the next cursor page. While a run is
 * running the newest runs are read again every POLL_MS. A refresh reads as many runs as are
 * shown, so the older pages already open stay.
 */
export function RunTimeline({
  monitor,
  started,
  onRunEnded,
}: {
  monitor: Monitor;
  /** The run Run now started last (its id), read for at once and followed until it ends. */
  started: string | null;
  /** A run followed here has ended: the monitor's last run and change have moved. */
  onRunEnded(): void;
}) {
  const { call } = useSession();
  const base = `/v1/account/monitors/${encodeURIComponent(monitor.id)}/runs`;
  const [runs, setRuns] = useState<RunPage | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [version, setVersion] = useState(0);
  const [moreBusy, setMoreBusy] = useState(false);
  const [announcement, setAnnouncement] = useState('');
  const shown = useRef(PAGE_SIZE);
  const running = useRef(new Set<string>());
  const followed = useRef(new Set<string>());
  const pollingSince = useRef<number | null>(null);
  const endedRef = useRef(onRunEnded);
  endedRef.current = onRunEnded;
  const headingId = useId();

  // biome-ignore lint/correctness/useExhaustiveDependencies: version triggers reads.
  useEffect(() => {
    // A run just started is followed even if it has ended by the first read (a refusal is
    // quick): its end is reported once.
    if (started !== null && !followed.current.has(started)) {
      followed.current.add(started);
      running.current.add(started);
    }
    const controller = new AbortController();
    const limit = Math.min(MAX_PAGE_SIZE, Math.max(PAGE_SIZE, shown.current));
    call<RunPage>(`${base}?limit=${limit}`, { signal: controller.signal }).then(
      (page) => {
        if (controller.signal.aborted) return;
        const ended = page.data.filter((r) => r.status !== 'running' && running.current.has(r.id));
        running.current = new Set(page.data.filter((r) => r.status === 'running').map((r) => r.id));
        if (ended.length > 0) {
          setAnnouncement(ended.map(runWords).join(' '));
          endedRef.current();
        }
        setRuns(page);
        setError(null);
      },
      (err: unknown) => {
        if (controller.signal.aborted) return;
        setError(err instanceof Error ? err.message : 'The runs could not be read.');
      },
    );
    return () => controller.abort();
  }, [base, call, started, version]);

  // Read again while a run is running, for POLL_MAX_MS at most from the first one seen.
  useEffect(() => {
    if (!runs?.data.some((r) => r.status === 'running')) {
      pollingSince.current = null;
      return;
    }
    pollingSince.current ??= Date.now();
    if (Date.now() - pollingSince.current > POLL_MAX_MS) return;
    const timer = setTimeout(() => setVersion((v) => v + 1), POLL_MS);
    return () => clearTimeout(timer);
  }, [runs]);

  async function loadMore() {
    if (!runs?.next_cursor) return;
    setMoreBusy(true);
    try {
      const page = await call<RunPage>(
        `${base}?limit=${PAGE_SIZE}&cursor=${encodeURIComponent(runs.next_cursor)}`,
      );
      setRuns((r) => {
        if (!r) return page;
        const seen = new Set(r.data.map((x) => x.id));
        const data = [...r.data, ...page.data.filter((x) => !seen.has(x.id))];
        shown.current = data.length;
        return { data, has_more: page.has_more, next_cursor: page.next_cursor };
      });
      setError(null);
    } catch (err) {
      setError(err instanceof Error ? err.message : 'The older runs could not be read.');
    } finally {
      setMoreBusy(false);
    }
  }

  const list = runs?.data ?? null;
  return (
    <section className="timeline" aria-labelledby={headingId} aria-busy={runs === null}>
      <h4 id={headingId} className="timeline-title">
        Runs{' '}
        <button type="button" className="btn-link" onClick={() => setVersion((v) => v + 1)}>
          Refresh<span className="visually-hidden"> the runs</span>
        </button>
      </h4>
      <p className="visually-hidden" role="status">
        {announcement}
      </p>
      {error && <Notice tone="error">{error}</Notice>}
      {list === null ? (
        <p>
          <SkeletonText width={30} />
        </p>
      ) : list.length === 0 ? (
        <p className="empty">
          No runs yet. The first is due{' '}
          <time dateTime={monitor.next_run_at} title={formatDateTime(monitor.next_run_at)}>
            {formatRelative(monitor.next_run_at)}
          </time>
          {monitor.status === 'active' ? '' : ' once it is resumed'}; Run now starts one at once.
        </p>
      ) : (
        <ol className="runs">
          {list.map((run, i) => (
            <RunItem
              key={run.id}
              run={run}
              before={previousSuccess(list, i)}
              olderPages={runs?.has_more ?? false}
            />
          ))}
        </ol>
      )}
      {runs?.has_more && (
        <p>
          <MoreButton busy={moreBusy} onClick={loadMore} label="Show older runs" small />
        </p>
      )}
    </section>
  );
}

/** A run's outcome in a sentence, for the announcement when it ends. */
function runWords(run: MonitorRun): string {
  if (run.status === 'failed') return `The run failed: ${run.error ?? 'no reason given'}.`;
  if (run.changed) return `The run found a change: ${formatShare(run.changed_fraction ?? 0)}.`;
  return 'The run found no change.';
}

function RunItem({
  run,
  before,
  olderPages,
}: {
  run: MonitorRun;
  /** The succeeded run before it in the timeline. */
  before: MonitorRun | null;
  /** Whether older runs are still to be read. */
  olderPages: boolean;
}) {
  const at = formatDateTime(run.at);
  const outcome =
    run.status === 'running'
      ? 'Running…'
      : run.status === 'failed'
        ? 'Failed'
        : run.changed
          ? `Changed: ${formatShare(run.changed_fraction ?? 0)} of the pixels`
          : before === null && !olderPages
            ? 'First run: the baseline'
            : 'No change';
  const tone =
    run.status === 'failed'
      ? 'failed'
      : run.changed
        ? 'changed'
        : run.status === 'running'
          ? 'running'
          : 'same';
  return (
    <li className={`run run-${tone}`}>
      <p className="run-head">
        <time dateTime={run.at} title={formatRelative(run.at)}>
          {at}
        </time>
        <span className="run-outcome">{outcome}</span>
        {run.image_url && (
          <a href={run.image_url} target="_blank" rel="noreferrer" className="run-link">
            Open image<span className="visually-hidden"> of the run of {at}</span>
          </a>
        )}
      </p>
      {run.status === 'failed' && (
        <p className="run-error">
          <code>{run.error ?? 'The run failed without a reason.'}</code>
        </p>
      )}
      {run.status === 'succeeded' && run.changed && (
        <BeforeAfter
          key={before?.id ?? 'none'}
          before={before}
          after={run}
          missing={
            olderPages
              ? 'The run it was compared with is on an older page: show older runs below to compare.'
              : 'The run it was compared with is not kept any more.'
          }
        />
      )}
    </li>
  );
}
