import { formatDay, formatNumber } from '../shared/format.ts';
import { SkeletonText } from './ui.tsx';

const DAY_MS = 86_400_000;

/** Every UTC day key from `start` up to, not including, `end`. */
export function daysBetween(startIso: string, endIso: string): string[] {
  const days: string[] = [];
  for (let t = Date.parse(startIso); t < Date.parse(endIso); t += DAY_MS) {
    days.push(new Date(t).toISOString().slice(0, 10));
  }
  return days;
}

/** Weekly labels from the first day, and the last day unless a weekly one is too close. */
function labelled(i: number, count: number): boolean {
  if (i === count - 1) return true;
  return i % 7 === 0 && count - 1 - i >= 4;
}

const screenshots = (n: number) => `${formatNumber(n)} screenshot${n === 1 ? '' : 's'}`;

/** 1, 2, 5, 10, 20, 50, ...: a round top for the scale. */
function niceCeiling(n: number): number {
  let step = 1;
  for (;;) {
    for (const m of [1, 2, 5]) if (step * m >= n) return step * m;
    step *= 10;
  }
}

/**
 * Screenshots per UTC day of the period, as bars; the same numbers as a table on request.
 * Heights are percentages of a fixed plot, so the chart has its size before data arrives.
 */
export function UsageChart({
  periodStart,
  resetsAt,
  days,
}: {
  periodStart: string;
  resetsAt: string;
  /** Null while loading: the frame is drawn, empty, at its final size. */
  days: Array<{ day: string; count: number }> | null;
}) {
  const all = daysBetween(periodStart, resetsAt);
  const counts = new Map((days ?? []).map((d) => [d.day, d.count]));
  const today = new Date().toISOString().slice(0, 10);
  const total = (days ?? []).reduce((sum, d) => sum + d.count, 0);
  const busiest = (days ?? []).reduce<{ day: string; count: number } | null>(
    (best, d) => (best === null || d.count > best.count ? d : best),
    null,
  );
  const top = niceCeiling(Math.max(1, busiest?.count ?? 0));
  const summary =
    days === null
      ? 'Loading the screenshots per day.'
      : total === 0
        ? 'No screenshots yet this period.'
        : `${screenshots(total)} this period, most on ${formatDay(busiest?.day ?? today)} (${formatNumber(busiest?.count ?? 0)}).`;
  const past = all.filter((d) => d <= today);

  return (
    <figure className="chart" aria-busy={days === null}>
      <div className="chart-plot">
        <div className="chart-scale" aria-hidden="true">
          <span>{days === null ? '\u00a0' : formatNumber(top)}</span>
          <span>0</span>
        </div>
        <div className="chart-bars" role="img" aria-label={summary}>
          {all.map((day) => {
            const count = counts.get(day) ?? 0;
            const state = day === today ? ' is-today' : day > today ? ' is-future' : '';
            return (
              <div key={day} className={`chart-bar${state}`} title={`${formatDay(day)}: ${count}`}>
                <span className="chart-fill" style={{ height: `${(count / top) * 100}%` }} />
              </div>
            );
          })}
        </div>
      </div>
      <div className="chart-labels" aria-hidden="true">
        {all.map((day, i) => (
          <span key={day}>{labelled(i, all.length) ? formatDay(day) : ''}</span>
        ))}
      </div>
      <figcaption className="chart-caption muted">
        {days === null ? <SkeletonText width={40} /> : summary} Days are UTC.
      </figcaption>
      <details className="chart-table">
        <summary>Show the numbers as a table</summary>
        <table className="table table-compact">
          <thead>
            <tr>
              <th scope="col">Day (UTC)</th>
              <th scope="col">Screenshots</th>
            </tr>
          </thead>
          <tbody>
            {past.map((day) => (
              <tr key={day}>
                <td>{formatDay(day)}</td>
                <td>{formatNumber(counts.get(day) ?? 0)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </figure>
  );
}
