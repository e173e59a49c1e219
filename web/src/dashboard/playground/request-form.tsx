import { type FormEvent, type ReactNode, useId } from 'react';
import { formatNumber } from '../../shared/format.ts';
import type { Plan } from '../../shared/plans.ts';
import { Check, InputField, NumberField, SelectField, TextAreaField } from '../fields.tsx';
import { SkeletonText } from '../ui.tsx';
import { parseSide } from './capture-body.ts';
import type { CaptureKind, OptionsForm } from './options-form.ts';

const FORMATS = ['png', 'jpeg', 'webp', 'pdf'];
const PDF_PAPERS = ['a4', 'letter', 'legal', 'a3', 'tabloid'];

/** "A4", "Letter": the paper names as printed on the box. */
const paperName = (p: string) =>
  p === 'a4' || p === 'a3' ? p.toUpperCase() : p[0]?.toUpperCase() + p.slice(1);

/**
 * The request form: the key, the options every capture has (CaptureFields), then the rarer
 * ones in the folded sections (`children`).
 */
export function RequestForm({
  form,
  plan,
  pro,
  busy,
  onSubmit,
  keyField,
  children,
}: {
  form: OptionsForm;
  /** The account's plan, once loaded. */
  plan: Plan | undefined;
  pro: boolean;
  busy: boolean;
  onSubmit(event: FormEvent): void;
  keyField: ReactNode;
  children: ReactNode;
}) {
  return (
    <form className="stack" onSubmit={onSubmit} noValidate>
      {keyField}
      <CaptureFields form={form} plan={plan} pro={pro} kind="capture" />
      {children}
      <button type="submit" className="btn btn-primary" disabled={busy}>
        {busy ? 'Capturing…' : 'Run capture'}
      </button>
    </form>
  );
}

/**
 * The options every capture has: what it shows (URL or document), format, size, full page.
 * Choices the plan does not allow are shown disabled or left out, as the API would refuse
 * them; a monitor's form leaves out what a monitor cannot take.
 */
export function CaptureFields({
  form: { options, set, text, flag },
  plan,
  pro,
  kind,
}: {
  form: OptionsForm;
  plan: Plan | undefined;
  pro: boolean;
  kind: CaptureKind;
}) {
  const sizeHint = useId();
  const monitor = kind === 'monitor';
  const formats = monitor ? FORMATS.filter((f) => f !== 'pdf') : FORMATS;
  return (
    <>
      <SelectField label="Capture" {...text('source')}>
        <option value="url">A page at a URL</option>
        <option value="html">HTML</option>
        {!monitor && (
          <>
            <option value="markdown">Markdown</option>
            <option value="batch" disabled={!pro}>
              A batch of URLs{pro ? '' : ' (Pro)'}
            </option>
          </>
        )}
      </SelectField>
      {options.source === 'batch' ? (
        <TextAreaField
          label="URLs (one a line, at most 50)"
          mono
          rows={6}
          spellCheck={false}
          placeholder={'https://example.com\nhttps://example.org'}
          hint={<>Each URL is an async job with the options below; the result lists them.</>}
          {...text('batchUrls')}
        />
      ) : options.source === 'url' ? (
        <InputField
          label="Page URL"
          type="text"
          inputMode="url"
          spellCheck={false}
          {...text('url')}
        />
      ) : (
        <>
          <TextAreaField
            label={options.source === 'html' ? 'HTML document' : 'Markdown document'}
            mono
            rows={8}
            spellCheck={false}
            maxLength={options.source === 'html' ? 1_048_576 : 262_144}
            {...text('document')}
          />
          <InputField
            label="Base URL (optional)"
            type="text"
            inputMode="url"
            spellCheck={false}
            placeholder="https://example.com/ (relative links resolve here)"
            {...text('baseUrl')}
          />
        </>
      )}
      <div className="field-row">
        <SelectField label="Format" {...text('format')}>
          {formats.map((f) => (
            <option key={f} value={f} disabled={plan ? !plan.formats.includes(f) : false}>
              {f.toUpperCase()}
              {plan && !plan.formats.includes(f) ? ' (Pro)' : ''}
            </option>
          ))}
        </SelectField>
        <NumberField
          label="Width"
          max={plan?.max_width}
          value={options.width}
          onNumberChange={(n) => set('width', n)}
          describedBy={sizeHint}
        />
        <NumberField
          label="Height"
          max={plan?.max_height}
          value={options.height}
          onNumberChange={(n) => set('height', n)}
          describedBy={sizeHint}
        />
      </div>
      <p id={sizeHint} className="field-hint">
        CSS pixels, up to{' '}
        {plan ? (
          `${formatNumber(plan.max_width)}×${formatNumber(plan.max_height)}`
        ) : (
          <SkeletonText width={11} />
        )}{' '}
        on your plan; larger values are capped.
      </p>
      {options.format !== 'pdf' && (
        <div className="field-row">
          <InputField
            label="Image width"
            type="number"
            min={16}
            placeholder="as rendered"
            {...text('imageWidth')}
          />
          <InputField
            label="Image height"
            type="number"
            min={16}
            placeholder="as rendered"
            {...text('imageHeight')}
          />
          {parseSide(options.imageWidth) !== null && parseSide(options.imageHeight) !== null && (
            <SelectField label="Fit" {...text('imageFit')}>
              <option value="cover">Cover (crop)</option>
              <option value="contain">Contain</option>
              <option value="fill">Fill (stretch)</option>
            </SelectField>
          )}
        </div>
      )}
      {options.format === 'pdf' && (
        <div className="field-row">
          <SelectField label="PDF paper" {...text('pdfPaper')}>
            {PDF_PAPERS.map((p) => (
              <option key={p} value={p}>
                {paperName(p)}
              </option>
            ))}
          </SelectField>
          <div className="checks">
            <Check {...flag('pdfLandscape')}>PDF landscape</Check>
            <Check {...flag('pdfSinglePage')}>One PDF page as tall as the content</Check>
          </div>
        </div>
      )}
      <div className="checks">
        <Check {...flag('fullPage')}>Full page</Check>
        {pro && !monitor && <Check {...flag('fresh')}>Fresh render (skip the cache)</Check>}
      </div>
      {pro && (
        <SelectField
          label="Device scale"
          fieldClass="field-narrow"
          value={options.scale}
          onValueChange={(v) => set('scale', Number(v))}
        >
          {[1, 2, 3].map((s) => (
            <option key={s} value={s}>
              {s}×
            </option>
          ))}
        </SelectField>
      )}
    </>
  );
}
