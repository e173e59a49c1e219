import { type FormEvent, useEffect, useId, useRef, useState } from 'react';
import type { ApiKey, CreatedKey, JsonBody, ReplacedSecret } from '../api/types.ts';
import { ApiError, apiOrigin } from '../shared/api.ts';
import { CopyButton } from '../shared/copy-button.tsx';
import { formatDate, formatDateTime, formatRelative } from '../shared/format.ts';
import { buildRenderLink, type LinkParam } from '../shared/signed-link.ts';
import { ConfirmDialog } from './confirm-dialog.tsx';
import { Check, InputField, NumberField, SelectField } from './fields.tsx';
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
  // Signing secrets seen in this tab (a new key's, a replaced one's), for the link builder:
  // in memory only, as the API shows each once.
  const [secrets, setSecrets] = useState<Readonly<Record<number, string>>>({});
  const [replacing, setReplacing] = useState<ApiKey | null>(null);
  const [replaceBusy, setReplaceBusy] = useState(false);
  const [replaceError, setReplaceError] = useState<string | null>(null);
  const [replaced, setReplaced] = useState<{ key: ApiKey; secret: string } | null>(null);

  async function replaceSecret() {
    if (!replacing) return;
    setReplaceBusy(true);
    setReplaceError(null);
    try {
      const body = await call<ReplacedSecret>(`/v1/keys/${replacing.id}/signing-secret`, {
        method: 'POST',
      });
      setSecrets((known) => ({ ...known, [body.id]: body.signing_secret }));
      setReplaced({ key: replacing, secret: body.signing_secret });
      setReplacing(null);
    } catch (err) {
      setReplaceError(err instanceof Error ? err.message : 'The secret could not be replaced.');
    } finally {
      setReplaceBusy(false);
    }
  }

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
            setSecrets((known) => ({ ...known, [key.id]: key.signing_secret }));
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

      {replaced && (
        <SecretReveal
          title={`New signing secret for “${replaced.key.name || replaced.key.prefix}”`}
          secret={replaced.secret}
          onDone={() => setReplaced(null)}
        />
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
                          className="btn btn-secondary btn-small"
                          onClick={() => {
                            setReplaceError(null);
                            setReplacing(key);
                          }}
                          aria-label={`New signing secret for ${key.name || key.prefix}`}
                        >
                          New signing secret
                        </button>{' '}
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

      {list && list.length > 0 && <LinkBuilder keys={list} secrets={secrets} />}

      <ConfirmDialog
        open={replacing !== null}
        title="Replace the signing secret?"
        confirmLabel="Replace secret"
        busy={replaceBusy}
        error={replaceError}
        onConfirm={replaceSecret}
        onCancel={() => setReplacing(null)}
      >
        {replacing && (
          <p>
            Render links signed with the current secret of{' '}
            <strong>{replacing.name || 'Unnamed key'}</strong> (<code>{replacing.prefix}…</code>)
            stop working at once. The API key itself keeps working.
          </p>
        )}
      </ConfirmDialog>

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
        <InputField
          label="Key name"
          fieldClass="grow"
          value={name}
          maxLength={100}
          placeholder="For example: production"
          onValueChange={setName}
          hint="A name to recognise it by, such as the environment or service that uses it."
        />
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
  const secretId = useId();
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
      <p className="field-hint">
        Its signing secret signs render links (<code>&lt;img src&gt;</code> in pages and emails); it
        is shown once too, and it is not the key.
      </p>
      <div className="key-reveal">
        <label htmlFor={secretId} className="visually-hidden">
          New key's signing secret
        </label>
        <input
          id={secretId}
          className="input input-mono"
          readOnly
          value={created.signing_secret}
          onFocus={(e) => e.currentTarget.select()}
        />
        <CopyButton text={created.signing_secret} label="Copy signing secret" />
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

/** A replaced signing secret, once, with a copy button. */
function SecretReveal({
  title,
  secret,
  onDone,
}: {
  title: string;
  secret: string;
  onDone: () => void;
}) {
  const headingRef = useRef<HTMLHeadingElement>(null);
  const inputId = useId();
  useEffect(() => headingRef.current?.focus(), []);
  return (
    <section className="card card-highlight" aria-labelledby="secret-title">
      <h2 id="secret-title" className="card-title" ref={headingRef} tabIndex={-1}>
        {title}
      </h2>
      <p className="warning-text">
        <strong>Copy it now. You will not see this again.</strong> Links signed with the old secret
        are refused from now on.
      </p>
      <div className="key-reveal">
        <label htmlFor={inputId} className="visually-hidden">
          Signing secret
        </label>
        <input
          id={inputId}
          className="input input-mono"
          readOnly
          value={secret}
          onFocus={(e) => e.currentTarget.select()}
        />
        <CopyButton text={secret} label="Copy signing secret" className="btn btn-primary" />
      </div>
      <p className="actions">
        <button type="button" className="btn btn-secondary" onClick={onDone}>
          I have stored it, hide it
        </button>
      </p>
    </section>
  );
}

const MAX_LINK_HOURS = 7 * 24;

/**
 * Builds a signed render link in the page (WebCrypto): the secret is pasted in, or known from
 * a key made or a secret replaced in this tab, and never sent anywhere.
 */
function LinkBuilder({
  keys,
  secrets,
}: {
  keys: readonly ApiKey[];
  secrets: Readonly<Record<number, string>>;
}) {
  const ids = { link: useId(), hint: useId() };
  const [keyId, setKeyId] = useState<number>(keys[0]?.id ?? 0);
  const [typedSecret, setTypedSecret] = useState('');
  const [url, setUrl] = useState('https://example.com');
  const [width, setWidth] = useState(1280);
  const [height, setHeight] = useState(800);
  const [format, setFormat] = useState('png');
  const [fullPage, setFullPage] = useState(false);
  const [hours, setHours] = useState(24);
  const [link, setLink] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const known = secrets[keyId];
  const secret = typedSecret.trim() || known || '';

  async function build(event: FormEvent) {
    event.preventDefault();
    setError(null);
    setLink(null);
    if (!/^sig_live_[0-9A-Za-z]{32,}$/.test(secret)) {
      setError('Paste the signing secret of this key (it starts with sig_live_).');
      return;
    }
    const params: LinkParam[] = [
      ['url', url.trim()],
      ['width', String(width)],
      ['height', String(height)],
      ['format', format],
      ...(fullPage ? [['full_page', 'true'] as const] : []),
    ];
    const lifetime = Math.min(Math.max(1, hours), MAX_LINK_HOURS) * 3600;
    setLink(
      await buildRenderLink({
        base: apiOrigin(),
        secret,
        keyId,
        expires: Math.floor(Date.now() / 1000) + lifetime,
        params,
      }),
    );
  }

  return (
    <section className="card" aria-labelledby="link-builder-title">
      <h2 id="link-builder-title" className="card-title">
        Render link builder
      </h2>
      <p className="page-intro">
        A signed link captures the page when it is loaded, for <code>&lt;img src&gt;</code> in pages
        and emails; it counts like a capture. It carries no key, only a signature made here with the
        key's signing secret.
      </p>
      <form className="stack" onSubmit={build} noValidate>
        <div className="field-row">
          <SelectField label="Key" value={keyId} onValueChange={(value) => setKeyId(Number(value))}>
            {keys.map((k) => (
              <option key={k.id} value={k.id}>
                {k.name || 'Unnamed'} ({k.prefix}…)
              </option>
            ))}
          </SelectField>
          <InputField
            label="Signing secret"
            fieldClass="grow"
            mono
            type="password"
            autoComplete="off"
            spellCheck={false}
            value={typedSecret}
            placeholder={known ? 'Known from this session' : 'sig_live_…'}
            onValueChange={setTypedSecret}
            describedBy={ids.hint}
          />
        </div>
        <p id={ids.hint} className="field-hint">
          Used in this page only, never sent. Lost it? Replace it with “New signing secret”.
        </p>
        <InputField
          label="Page URL"
          type="text"
          inputMode="url"
          spellCheck={false}
          value={url}
          onValueChange={setUrl}
        />
        <div className="field-row">
          <SelectField label="Format" value={format} onValueChange={setFormat}>
            {['png', 'jpeg', 'webp'].map((f) => (
              <option key={f} value={f}>
                {f.toUpperCase()}
              </option>
            ))}
          </SelectField>
          <NumberField label="Width" value={width} onNumberChange={setWidth} />
          <NumberField label="Height" value={height} onNumberChange={setHeight} />
          <NumberField
            label="Valid for (hours)"
            max={MAX_LINK_HOURS}
            value={hours}
            onNumberChange={setHours}
          />
        </div>
        <div className="checks">
          <Check checked={fullPage} onCheckedChange={setFullPage}>
            Full page
          </Check>
        </div>
        <button type="submit" className="btn btn-primary">
          Build link
        </button>
      </form>
      {error && <Notice tone="error">{error}</Notice>}
      {link && (
        <div className="key-reveal">
          <label htmlFor={ids.link} className="visually-hidden">
            Signed render link
          </label>
          <input
            id={ids.link}
            className="input input-mono"
            readOnly
            value={link}
            onFocus={(e) => e.currentTarget.select()}
          />
          <CopyButton text={link} label="Copy link" className="btn btn-primary" />
          <CopyButton
            text={`<img src="${link.replace(/&/g, '&amp;')}" alt="">`}
            label="Copy <img>"
          />
        </div>
      )}
    </section>
  );
}
