import { type FormEvent, useEffect, useId, useRef, useState } from 'react';
import type { ApiKey, CreatedKey, JsonBody } from '../api/types.ts';
import { ApiError } from '../shared/api.ts';
import { CopyButton } from '../shared/copy-button.tsx';
import { formatDate, formatDateTime, formatRelative } from '../shared/format.ts';
import { ConfirmDialog } from './confirm-dialog.tsx';
import { Link } from './router.tsx';
import { useSession } from './session.tsx';
import { Notice, PageTitle, SkeletonText, useResource } from './ui.tsx';

const MAX_KEYS = 20;

export function KeysPage() {
  const { call, rememberKey } = useSession();
  const keys = useResource((signal) =>
    call<JsonBody<'/v1/keys', 'get', 200>>('/v1/keys', { signal }),
  );
  const [created, setCreated] = useState<CreatedKey | null>(null);
  const [revoking, setRevoking] = useState<ApiKey | null>(null);
  const [revokeBusy, setRevokeBusy] = useState(false);
  const [revokeError, setRevokeError] = useState<string | null>(null);
  const [message, setMessage] = useState<string | null>(null);

  async function revoke() {
    if (!revoking) return;
    setRevokeBusy(true);
    setRevokeError(null);
    try {
      await call(`/v1/keys/${revoking.id}`, { method: 'DELETE' });
      setMessage(
        `The key “${revoking.name || revoking.prefix}” is revoked. Requests with it are refused from now on.`,
      );
      setRevoking(null);
      keys.reload();
    } catch (err) {
      setRevokeError(err instanceof Error ? err.message : 'The key could not be revoked.');
    } finally {
      setRevokeBusy(false);
    }
  }

  const list = keys.data?.data ?? null;
  return (
    <>
      <PageTitle title="API keys">API keys</PageTitle>
      <p className="page-intro">
        Send a key in the <code>X-API-Key</code> header. Treat keys like passwords: keep them out of
        browser code and repositories, and use one key per environment so you can revoke one without
        stopping the others.
      </p>

      {created ? (
        <NewKey created={created} onDone={() => setCreated(null)} />
      ) : (
        <CreateKeyForm
          atLimit={list !== null && list.length >= MAX_KEYS}
          onCreated={(key) => {
            rememberKey(key.id, key.key);
            setCreated(key);
            setMessage(null);
            keys.reload();
          }}
        />
      )}

      {message && (
        <Notice tone="success" onDismiss={() => setMessage(null)}>
          {message}
        </Notice>
      )}

      <section className="card" aria-labelledby="keys-title" aria-busy={keys.loading && !list}>
        <h2 id="keys-title" className="card-title">
          Your keys{' '}
          {list && (
            <span className="muted">
              ({list.length} of {MAX_KEYS})
            </span>
          )}
        </h2>
        {keys.error && !list && (
          <Notice tone="error">
            {keys.error}{' '}
            <button type="button" className="btn-link" onClick={keys.reload}>
              Try again
            </button>
          </Notice>
        )}
        {list && list.length === 0 ? (
          <p className="empty">No keys yet. Create one above to start calling the API.</p>
        ) : (
          <table className="table table-stack">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Key</th>
                <th scope="col">Created</th>
                <th scope="col">Last used</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {list
                ? list.map((key) => (
                    <tr key={key.id}>
                      <td data-label="Name">
                        {key.name || <span className="muted">Unnamed</span>}
                      </td>
                      <td data-label="Key">
                        <code>{key.prefix}…</code>
                      </td>
                      <td data-label="Created">
                        <time dateTime={key.created_at} title={formatDateTime(key.created_at)}>
                          {formatDate(key.created_at)}
                        </time>
                      </td>
                      <td data-label="Last used">
                        {key.last_used_at ? (
                          <time
                            dateTime={key.last_used_at}
                            title={formatDateTime(key.last_used_at)}
                          >
                            {formatRelative(key.last_used_at)}
                          </time>
                        ) : (
                          <span className="muted">Never</span>
                        )}
                      </td>
                      <td className="cell-actions">
                        <button
                          type="button"
                          className="btn btn-danger-outline btn-small"
                          onClick={() => {
                            setRevokeError(null);
                            setRevoking(key);
                          }}
                          aria-label={`Revoke ${key.name || key.prefix}`}
                        >
                          Revoke
                        </button>
                      </td>
                    </tr>
                  ))
                : [0, 1].map((i) => (
                    <tr key={i}>
                      <td data-label="Name">
                        <SkeletonText width={10} />
                      </td>
                      <td data-label="Key">
                        <SkeletonText width={14} />
                      </td>
                      <td data-label="Created">
                        <SkeletonText width={10} />
                      </td>
                      <td data-label="Last used">
                        <SkeletonText width={10} />
                      </td>
                      <td className="cell-actions">
                        <span className="btn btn-small skeleton" aria-hidden="true">
                          Revoke
                        </span>
                      </td>
                    </tr>
                  ))}
            </tbody>
          </table>
        )}
      </section>

      <ConfirmDialog
        open={revoking !== null}
        title="Revoke this key?"
        confirmLabel="Revoke key"
        busy={revokeBusy}
        error={revokeError}
        onConfirm={revoke}
        onCancel={() => setRevoking(null)}
      >
        {revoking && (
          <p>
            <strong>{revoking.name || 'Unnamed key'}</strong> (<code>{revoking.prefix}…</code>)
            stops working at once, including captures in progress. This cannot be undone.
          </p>
        )}
      </ConfirmDialog>
    </>
  );
}

function CreateKeyForm({
  atLimit,
  onCreated,
}: {
  atLimit: boolean;
  onCreated: (key: CreatedKey) => void;
}) {
  const { call } = useSession();
  const [name, setName] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const nameId = useId();
  const hintId = useId();

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const key = await call<CreatedKey>('/v1/keys', {
        method: 'POST',
        body: name.trim() ? { name: name.trim() } : {},
      });
      setName('');
      onCreated(key);
    } catch (err) {
      setError(err instanceof ApiError ? err.message : 'The key could not be created.');
    } finally {
      setBusy(false);
    }
  }

  return (
    <section className="card" aria-labelledby="create-title">
      <h2 id="create-title" className="card-title">
        Create a key
      </h2>
      <form className="inline-form" onSubmit={submit}>
        <div className="field grow">
          <label htmlFor={nameId}>Key name</label>
          <input
            id={nameId}
            className="input"
            value={name}
            maxLength={100}
            placeholder="For example: production"
            onChange={(e) => setName(e.target.value)}
            aria-describedby={hintId}
          />
          <p id={hintId} className="field-hint">
            A name to recognise it by, such as the environment or service that uses it.
          </p>
        </div>
        <button type="submit" className="btn btn-primary" disabled={busy || atLimit}>
          {busy ? 'Creating…' : 'Create key'}
        </button>
      </form>
      {atLimit && (
        <Notice tone="warning" live="none">
          You have {MAX_KEYS} active keys, the most an account can hold. Revoke one to create
          another.
        </Notice>
      )}
      {error && <Notice tone="error">{error}</Notice>}
    </section>
  );
}

/** The plaintext, once: a copy button, and words that say it will not come back. */
function NewKey({ created, onDone }: { created: CreatedKey; onDone: () => void }) {
  const headingRef = useRef<HTMLHeadingElement>(null);
  const keyId = useId();
  const warningId = useId();
  useEffect(() => headingRef.current?.focus(), []);

  return (
    <section className="card card-highlight" aria-labelledby="new-key-title">
      <h2 id="new-key-title" className="card-title" ref={headingRef} tabIndex={-1}>
        Your new key{created.name ? `: ${created.name}` : ''}
      </h2>
      <p id={warningId} className="warning-text">
        <strong>Copy it now. You will not see this again.</strong> Shotsmith stores only a hash of
        the key; if you lose it, revoke it and create another.
      </p>
      <div className="key-reveal">
        <label htmlFor={keyId} className="visually-hidden">
          New API key
        </label>
        <input
          id={keyId}
          className="input input-mono"
          readOnly
          value={created.key}
          onFocus={(e) => e.currentTarget.select()}
          aria-describedby={warningId}
        />
        <CopyButton text={created.key} label="Copy key" className="btn btn-primary" />
      </div>
      <p className="actions">
        <Link to="/dashboard/playground" className="btn btn-secondary">
          Try it in the playground
        </Link>
        <button type="button" className="btn btn-secondary" onClick={onDone}>
          I have stored it, hide it
        </button>
      </p>
    </section>
  );
}
