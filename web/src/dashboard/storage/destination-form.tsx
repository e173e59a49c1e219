import { type FormEvent, useId, useState } from 'react';
import type { CreateDestinationBody, StorageDestination } from '../../api/types.ts';
import { ApiError, sentence } from '../../shared/api.ts';
import { Check, InputField, SelectField } from '../fields.tsx';
import { useSession } from '../session.tsx';
import { Notice } from '../ui.tsx';

/** The form as typed; `pathStyle` null follows the service's default for the endpoint. */
interface DestinationFields {
  name: string;
  endpoint: string;
  region: string;
  bucket: string;
  prefix: string;
  accessKeyId: string;
  secretAccessKey: string;
  pathStyle: boolean | null;
  acl: 'private' | 'public-read';
}

const EMPTY: DestinationFields = {
  name: '',
  endpoint: '',
  region: '',
  bucket: '',
  prefix: '',
  accessKeyId: '',
  secretAccessKey: '',
  pathStyle: null,
  acl: 'private',
};

/** The route's bucket rule (S3's own), checked here so the words are ours, not a pattern. */
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

/** What must be filled in, in the form's order, with the words for each. */
const REQUIRED: ReadonlyArray<readonly [keyof DestinationFields, string]> = [
  ['name', 'a name'],
  ['region', 'the region'],
  ['bucket', 'the bucket'],
  ['accessKeyId', 'the access key id'],
  ['secretAccessKey', 'the secret access key'],
];

/** Path-style addressing as the service would choose it: with an endpoint, not for AWS. */
const pathStyleOf = (f: DestinationFields): boolean => f.pathStyle ?? f.endpoint.trim() !== '';

/** Why the form cannot be sent yet, or null. */
function formProblem(f: DestinationFields): string | null {
  const missing = REQUIRED.filter(([field]) => String(f[field]).trim() === '').map(([, w]) => w);
  if (missing.length > 0) {
    const list =
      missing.length === 1
        ? missing[0]
        : `${missing.slice(0, -1).join(', ')} and ${missing[missing.length - 1]}`;
    return sentence(`Fill in ${list}`);
  }
  if (!BUCKET.test(f.bucket.trim())) {
    return 'A bucket name is 3 to 63 lowercase letters, digits, dots and hyphens, starting and ending with a letter or digit.';
  }
  return null;
}

/** The body of POST /v1/storage-destinations: optional fields only when given. */
function destinationBody(f: DestinationFields): CreateDestinationBody {
  return {
    name: f.name.trim(),
    ...(f.endpoint.trim() ? { endpoint: f.endpoint.trim() } : {}),
    region: f.region.trim(),
    bucket: f.bucket.trim(),
    ...(f.prefix.trim() ? { prefix: f.prefix.trim() } : {}),
    access_key_id: f.accessKeyId.trim(),
    // The secret exactly as pasted: a store's secret may well end in a character trim drops.
    secret_access_key: f.secretAccessKey,
    path_style: pathStyleOf(f),
    acl: f.acl,
  };
}

/** A refusal in words; an endpoint the egress rules refuse is not a page to capture. */
function refusalMessage(err: unknown): string {
  if (!(err instanceof ApiError)) return 'The destination could not be added.';
  if (err.body.code === 'url_not_allowed') {
    return `${sentence(err.body.error ?? 'the endpoint is not allowed')} A store on a private network is reachable only when the service's EGRESS_ALLOWLIST names its host:port.`;
  }
  return err.message;
}

/**
 * A new destination, sent by session to POST /v1/account/storage-destinations. The service writes a
 * test object into the bucket (and deletes it) before it saves anything, so a refusal here is
 * the bucket's own answer (storage_test_failed naming the provider's code), shown as it came.
 */
export function DestinationForm({ onCreated }: { onCreated(d: StorageDestination): void }) {
  const { call } = useSession();
  const [fields, setFields] = useState<DestinationFields>(EMPTY);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const ids = { credentials: useId() };

  const text = (name: Exclude<keyof DestinationFields, 'pathStyle' | 'acl'>) => ({
    value: fields[name],
    onValueChange: (value: string) => {
      setFields((f) => ({ ...f, [name]: value }));
      setError(null);
    },
  });

  async function submit(event: FormEvent) {
    event.preventDefault();
    const problem = formProblem(fields);
    if (problem) {
      setError(problem);
      return;
    }
    setBusy(true);
    setError(null);
    try {
      const created = await call<StorageDestination>('/v1/account/storage-destinations', {
        method: 'POST',
        body: destinationBody(fields),
      });
      // The secret leaves the page with the form: the service never shows it again.
      setFields(EMPTY);
      onCreated(created);
    } catch (err) {
      setError(refusalMessage(err));
    } finally {
      setBusy(false);
    }
  }

  return (
    <form className="stack" onSubmit={submit} noValidate>
      <div className="field-row">
        <InputField
          label="Name"
          fieldClass="grow"
          type="text"
          maxLength={100}
          placeholder="For example: assets"
          {...text('name')}
        />
        <InputField
          label="Endpoint (optional)"
          fieldClass="grow"
          mono
          type="text"
          inputMode="url"
          spellCheck={false}
          maxLength={2048}
          placeholder="Empty for AWS S3"
          {...text('endpoint')}
        />
      </div>
      <div className="field-row">
        <InputField
          label="Region"
          type="text"
          spellCheck={false}
          maxLength={32}
          placeholder="eu-west-1 (auto for R2)"
          {...text('region')}
        />
        <InputField
          label="Bucket"
          mono
          type="text"
          spellCheck={false}
          autoCapitalize="off"
          maxLength={63}
          {...text('bucket')}
        />
        <InputField
          label="Prefix (optional)"
          mono
          type="text"
          spellCheck={false}
          maxLength={512}
          placeholder="shotsmith"
          {...text('prefix')}
        />
      </div>
      <div className="field-row">
        <InputField
          label="Access key id"
          fieldClass="grow"
          mono
          type="text"
          autoComplete="off"
          spellCheck={false}
          maxLength={256}
          describedBy={ids.credentials}
          {...text('accessKeyId')}
        />
        <InputField
          label="Secret access key"
          fieldClass="grow"
          mono
          type="password"
          autoComplete="new-password"
          spellCheck={false}
          maxLength={512}
          describedBy={ids.credentials}
          {...text('secretAccessKey')}
        />
      </div>
      <p id={ids.credentials} className="field-hint">
        Credentials that may write and delete objects under the prefix. The secret is stored
        encrypted and never shown again, here or by the API.
      </p>
      <div className="field-row">
        <SelectField
          label="Object ACL"
          value={fields.acl}
          onValueChange={(value) =>
            setFields((f) => ({ ...f, acl: value === 'public-read' ? 'public-read' : 'private' }))
          }
        >
          <option value="private">Private</option>
          <option value="public-read">Public read</option>
        </SelectField>
        <div className="checks">
          <Check
            checked={pathStyleOf(fields)}
            onCheckedChange={(checked) => setFields((f) => ({ ...f, pathStyle: checked }))}
          >
            Path-style URLs (endpoint/bucket/key)
          </Check>
        </div>
      </div>
      {error && <Notice tone="error">{error}</Notice>}
      <div className="actions">
        <button type="submit" className="btn btn-primary" disabled={busy}>
          {busy ? 'Testing the bucket…' : 'Test and add'}
        </button>
      </div>
    </form>
  );
}
