import { useId } from 'react';
import type { StorageDestination } from '../../api/types.ts';
import type { Device } from '../../shared/devices.ts';
import { Check, InputField, SelectField, TextAreaField } from '../fields.tsx';
import { Link } from '../router.tsx';
import { CONTENT_KINDS, RESOURCE_KINDS } from './capture-body.ts';
import type { CaptureKind, OptionsForm } from './options-form.ts';

/**
 * The folded sections of the request form, one per group of docs/options.md: the device,
 * the page's context, actions on the page, and its requests. Closed, they send nothing.
 */

export function DeviceSection({
  form: { text, flag },
  devices,
}: {
  form: OptionsForm;
  devices: readonly Device[];
}) {
  return (
    <details className="stack">
      <summary>Device</summary>
      <SelectField
        label="Device preset"
        {...text('device')}
        hint={
          <>
            A preset sets the viewport, scale, touch and user agent; width, height and scale above
            are then not sent.
          </>
        }
      >
        <option value="">None (width and height above)</option>
        {devices.map((d) => (
          <option key={d.name} value={d.name}>
            {d.label}
          </option>
        ))}
      </SelectField>
      <div className="checks">
        <Check {...flag('mobile')}>Mobile</Check>
        <Check {...flag('hasTouch')}>Touch</Check>
        <Check {...flag('landscape')}>Landscape</Check>
      </div>
    </details>
  );
}

/**
 * Where and how the page is seen: its browser's language, clock and position, and (on a plan
 * with proxies) the proxy its traffic goes out through.
 */
export function PageContextSection({
  form: { text, flag },
  pro,
}: {
  form: OptionsForm;
  pro: boolean;
}) {
  const positionHint = useId();
  const proxyHint = useId();
  return (
    <details className="stack">
      <summary>Page context</summary>
      <InputField
        label="User agent"
        mono
        type="text"
        spellCheck={false}
        maxLength={512}
        placeholder="Chromium's own"
        {...text('userAgent')}
      />
      <div className="field-row">
        <InputField
          label="Locale"
          type="text"
          spellCheck={false}
          maxLength={35}
          placeholder="en-US"
          {...text('locale')}
        />
        <InputField
          label="Time zone"
          type="text"
          spellCheck={false}
          maxLength={64}
          placeholder="UTC"
          {...text('timezone')}
        />
      </div>
      <div className="field-row">
        <InputField
          label="Latitude"
          type="text"
          inputMode="decimal"
          spellCheck={false}
          placeholder="52.52"
          describedBy={positionHint}
          {...text('latitude')}
        />
        <InputField
          label="Longitude"
          type="text"
          inputMode="decimal"
          spellCheck={false}
          placeholder="13.405"
          describedBy={positionHint}
          {...text('longitude')}
        />
      </div>
      <p id={positionHint} className="field-hint">
        Degrees: the position the page's Geolocation API reports, permission granted (both, or
        neither).
      </p>
      {pro && (
        <>
          <div className="field-row">
            <InputField
              label="Proxy"
              mono
              type="text"
              autoComplete="off"
              spellCheck={false}
              maxLength={2048}
              placeholder="de-1, or socks5://user:pass@host:1080"
              describedBy={proxyHint}
              {...text('proxy')}
            />
            <InputField
              label="Proxy country"
              fieldClass="field-narrow"
              type="text"
              spellCheck={false}
              maxLength={2}
              placeholder="de"
              describedBy={proxyHint}
              {...text('proxyCountry')}
            />
          </div>
          <p id={proxyHint} className="field-hint">
            The page's traffic goes out through one of the service's proxies (its id, or a country
            one serves) or your own (http, https, socks5 or socks5h URL): one or the other.
          </p>
        </>
      )}
      <Check {...flag('print')}>Print style sheets (media type print)</Check>
    </details>
  );
}

/**
 * Where the image is written besides (or instead of) here: one of the account's storage
 * destinations (the Storage page), the key's template under its prefix, and whether a copy
 * stays hosted here. `destinations` is null while the listing loads (or if it failed: `error`).
 */
export function StorageSection({
  form: { options, text, flag },
  destinations,
  error,
}: {
  form: OptionsForm;
  destinations: readonly StorageDestination[] | null;
  error: string | null;
}) {
  const pathHint = useId();
  return (
    <details className="stack">
      <summary>Storage</summary>
      <SelectField
        label="Storage destination"
        {...text('storageDestination')}
        hint={
          error && !destinations ? (
            <>Your destinations could not be read: {error}</>
          ) : destinations?.length === 0 ? (
            <>
              You have no destinations yet:{' '}
              <Link to="/dashboard/storage">add your bucket on the Storage page</Link>.
            </>
          ) : (
            <>The image is written into your bucket too; an upload that fails fails the capture.</>
          )
        }
      >
        <option value="">None (hosted here only)</option>
        {destinations?.map((d) => (
          <option key={d.id} value={d.id}>
            {d.name} ({d.bucket})
          </option>
        ))}
      </SelectField>
      {options.storageDestination && (
        <>
          <InputField
            label="Path template"
            mono
            type="text"
            spellCheck={false}
            maxLength={512}
            placeholder="{id}.{ext}"
            describedBy={pathHint}
            {...text('storagePath')}
          />
          <p id={pathHint} className="field-hint">
            The object's key under the destination's prefix, with <code>{'{id}'}</code>,{' '}
            <code>{'{hash}'}</code>, <code>{'{ext}'}</code>, <code>{'{year}'}</code>,{' '}
            <code>{'{month}'}</code>, <code>{'{day}'}</code> and <code>{'{host}'}</code>.
          </p>
          <Check {...flag('storageHosted')}>
            Keep a copy here too (an image URL, kept as your plan keeps images)
          </Check>
        </>
      )}
    </details>
  );
}

/**
 * What the page does before the capture. A monitor's form leaves out what shapes a capture's
 * answer (metadata, content, cache TTL): a run answers nothing, and it is always fresh.
 */
export function PageActionsSection({
  form: { options, set, text, flag },
  kind = 'capture',
}: {
  form: OptionsForm;
  kind?: CaptureKind;
}) {
  return (
    <details className="stack">
      <summary>Page actions</summary>
      <TextAreaField
        label="CSS to add"
        mono
        rows={3}
        spellCheck={false}
        maxLength={32768}
        {...text('styles')}
      />
      <TextAreaField
        label="JavaScript to run"
        mono
        rows={3}
        spellCheck={false}
        maxLength={32768}
        {...text('scripts')}
      />
      <div className="field-row">
        <InputField
          label="Click (selector)"
          mono
          type="text"
          spellCheck={false}
          maxLength={500}
          {...text('click')}
        />
        <InputField
          label="Scroll to (selector)"
          mono
          type="text"
          spellCheck={false}
          maxLength={500}
          {...text('scrollIntoView')}
        />
      </div>
      <Check {...flag('failOnHttpError')}>Fail when the page answers 4xx or 5xx</Check>
      <InputField
        label="Clip region (x, y, w, h)"
        mono
        type="text"
        spellCheck={false}
        placeholder="0, 0, 800, 600"
        {...text('clip')}
        hint={
          <>Left, top, width and height in CSS pixels of the page; not with a full-page capture.</>
        }
      />
      {kind === 'capture' && (
        <>
          <Check {...flag('metadata')}>
            Page metadata in the answer (title, description, Open Graph)
          </Check>
          <fieldset className="stack">
            <legend>Keep the page's content beside the image</legend>
            <div className="checks">
              {CONTENT_KINDS.map((part) => (
                <Check
                  key={part}
                  checked={options.content.includes(part)}
                  onCheckedChange={(checked) =>
                    set(
                      'content',
                      CONTENT_KINDS.filter((k) =>
                        k === part ? checked : options.content.includes(k),
                      ),
                    )
                  }
                >
                  {part === 'html'
                    ? 'HTML (the DOM)'
                    : part === 'text'
                      ? 'Visible text'
                      : 'Markdown'}
                </Check>
              ))}
            </div>
          </fieldset>
          <InputField
            label="Cache TTL (seconds)"
            fieldClass="field-narrow"
            type="number"
            min={0}
            max={86400}
            value={options.cacheTtl}
            onValueChange={(v) =>
              set('cacheTtl', Math.min(86400, Math.max(0, Math.trunc(Number(v) || 0))))
            }
          />
        </>
      )}
    </details>
  );
}

export function RequestsSection({ form: { options, set, text, flag } }: { form: OptionsForm }) {
  return (
    <details className="stack">
      <summary>Requests</summary>
      <div className="checks">
        <Check {...flag('blockAds')}>Block ads</Check>
        <Check {...flag('blockTrackers')}>Block trackers</Check>
        <Check {...flag('blockCookieBanners')}>Dismiss cookie banners</Check>
      </div>
      <TextAreaField
        label="Block URLs (one pattern per line)"
        mono
        rows={2}
        spellCheck={false}
        placeholder="*://ads.example.com/*"
        {...text('blockRequests')}
      />
      <fieldset className="stack">
        <legend>Block kinds of request</legend>
        <div className="checks">
          {RESOURCE_KINDS.map((kind) => (
            <Check
              key={kind}
              checked={options.blockResources.includes(kind)}
              onCheckedChange={(checked) =>
                set(
                  'blockResources',
                  RESOURCE_KINDS.filter((k) =>
                    k === kind ? checked : options.blockResources.includes(k),
                  ),
                )
              }
            >
              {kind}
            </Check>
          ))}
        </div>
      </fieldset>
      <TextAreaField
        label="Headers (Name: value per line)"
        mono
        rows={2}
        spellCheck={false}
        placeholder="X-Preview: 1"
        {...text('headers')}
      />
      <TextAreaField
        label="Cookies (name=value per line)"
        mono
        rows={2}
        spellCheck={false}
        {...text('cookies')}
      />
      <div className="field-row">
        <InputField
          label="HTTP auth user"
          type="text"
          autoComplete="off"
          spellCheck={false}
          maxLength={256}
          {...text('authUser')}
        />
        <InputField
          label="HTTP auth password"
          type="password"
          autoComplete="off"
          maxLength={256}
          {...text('authPassword')}
        />
      </div>
    </details>
  );
}
