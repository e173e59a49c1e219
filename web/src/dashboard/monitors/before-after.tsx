import { useId, useState } from 'react';
import type { MonitorRun } from '../../api/types.ts';
import { formatDateTime } from '../../shared/format.ts';

/**
 * A changed run against the run it was compared with: the two images stacked, the earlier
 * one on top clipped at the slider (left of the line: before; right: after), and the diff
 * image laid over both on demand. The slider is a native range input, so arrows, Home and
 * End move it; the diff toggle is a pressed-or-not button.
 */
export function BeforeAfter({
  before,
  after,
  missing,
}: {
  /** The earlier run, null when the timeline does not hold it. */
  before: MonitorRun | null;
  after: MonitorRun;
  /** Why there is no earlier run, said in the caption. */
  missing: string;
}) {
  const [position, setPosition] = useState(50);
  const [showDiff, setShowDiff] = useState(false);
  // The earlier image follows its plan's retention: once swept, it is said, not shown broken.
  const [beforeGone, setBeforeGone] = useState(false);
  const sliderId = useId();
  const captionId = useId();
  const when = (run: MonitorRun) => formatDateTime(run.at);
  const comparable = before !== null && before.image_url !== null && !beforeGone;
  const diffUrl = after.diff_url;

  return (
    <figure className="compare" aria-describedby={captionId}>
      <div className="compare-frame">
        <img
          className="compare-after"
          src={after.image_url ?? undefined}
          alt={`After: the page at ${when(after)}`}
          loading="lazy"
        />
        {comparable && (
          <img
            className="compare-before"
            src={before.image_url ?? undefined}
            alt={`Before: the page at ${when(before)}`}
            loading="lazy"
            style={{ clipPath: `inset(0 ${100 - position}% 0 0)` }}
            onError={() => setBeforeGone(true)}
          />
        )}
        {comparable && !showDiff && (
          <span className="compare-line" style={{ left: `${position}%` }} aria-hidden="true" />
        )}
        {showDiff && diffUrl && (
          <img
            className="compare-diff"
            src={diffUrl}
            alt="The changes: changed pixels in red over a faded copy of this run"
          />
        )}
      </div>
      <div className="compare-controls">
        {comparable && (
          <div className="compare-slider">
            <label htmlFor={sliderId}>Before and after</label>
            <input
              id={sliderId}
              type="range"
              min={0}
              max={100}
              step={1}
              value={position}
              disabled={showDiff}
              aria-valuetext={`${position}% before, ${100 - position}% after`}
              onChange={(e) => setPosition(Number(e.target.value))}
            />
          </div>
        )}
        {diffUrl && (
          <button
            type="button"
            className="btn btn-secondary btn-small"
            aria-pressed={showDiff}
            onClick={() => setShowDiff((s) => !s)}
          >
            Show the changes
          </button>
        )}
      </div>
      <figcaption id={captionId} className="muted small">
        {comparable
          ? `Left of the line: the run of ${when(before)}; right: this run. `
          : before === null
            ? `${missing} `
            : 'The earlier image has expired (images are kept for your plan’s retention). '}
        {diffUrl
          ? 'The changes show the pixels that differ in red.'
          : 'The two images differ in size, so there is no pixel diff.'}
      </figcaption>
    </figure>
  );
}
