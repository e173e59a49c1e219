import { useId, useState } from 'react';
import { Link } from '../router.tsx';

/**
 * The API key the capture is sent with: hidden by default (a key is a password), filled in
 * with the newest key created in this tab when there is one.
 */
export function KeyField({
  value,
  onChange,
  fromThisTab,
}: {
  value: string;
  onChange(value: string): void;
  /** Whether the value started as a key created in this tab. */
  fromThisTab: boolean;
}) {
  const id = useId();
  const hintId = useId();
  const [showKey, setShowKey] = useState(false);
  return (
    <div className="field">
      <label htmlFor={id}>API key</label>
      <div className="input-row">
        <input
          id={id}
          className="input input-mono"
          type={showKey ? 'text' : 'password'}
          autoComplete="off"
          spellCheck={false}
          placeholder="sk_live_…"
          value={value}
          onChange={(e) => onChange(e.target.value)}
          aria-describedby={hintId}
        />
        <button
          type="button"
          className="btn btn-secondary"
          aria-pressed={showKey}
          onClick={() => setShowKey((s) => !s)}
        >
          {showKey ? 'Hide' : 'Show'}
          <span className="visually-hidden"> key</span>
        </button>
      </div>
      <p id={hintId} className="field-hint">
        {fromThisTab
          ? 'Filled in with the key you created in this tab. '
          : 'Paste a key you stored. '}
        The dashboard keeps keys in memory only; <Link to="/dashboard/keys">create one</Link> if you
        need to.
      </p>
    </div>
  );
}
