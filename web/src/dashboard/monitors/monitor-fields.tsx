import type { Plan } from '../../shared/plans.ts';
import { InputField, SelectField, TextAreaField } from '../fields.tsx';
import {
  EVERY_CHOICES,
  type Every,
  THRESHOLD_MAX_PERCENT,
  THRESHOLD_MIN_PERCENT,
} from './monitor-body.ts';

/** A monitor's `name` at most, in characters (`monitors.nameMaxLength`). */
const NAME_MAX_LENGTH = 200;

/** The monitor's own fields as both forms hold them (the create form adds ignored selectors). */
export interface MonitorFieldValues {
  name: string;
  every: Every;
  thresholdPercent: string;
  webhookUrl: string;
  ignoreSelectors?: string;
}

/**
 * A monitor's own fields, for the create and the edit form: name, interval (those below the
 * plan's `min_monitor_interval` disabled, as the API would refuse them), change threshold,
 * webhook, and on creation the selectors hidden before each run.
 */
export function MonitorFields<V extends MonitorFieldValues>({
  values,
  set,
  plan,
}: {
  values: V;
  set<K extends keyof V>(name: K, value: V[K]): void;
  plan: Plan | undefined;
}) {
  return (
    <>
      <InputField
        label="Name (optional)"
        type="text"
        maxLength={NAME_MAX_LENGTH}
        placeholder="Pricing page"
        value={values.name}
        onValueChange={(v) => set('name', v as V['name'])}
      />
      <div className="field-row">
        <SelectField
          label="Runs"
          value={values.every}
          onValueChange={(v) => set('every', v as V['every'])}
          hint={<>Each run is one capture of your monthly quota.</>}
        >
          {EVERY_CHOICES.map((e) => {
            const tooOften = plan ? e.minutes < plan.min_monitor_interval : false;
            return (
              <option key={e.value} value={e.value} disabled={tooOften}>
                {e.label}
                {tooOften ? ' (not on your plan)' : ''}
              </option>
            );
          })}
        </SelectField>
        <InputField
          label="Change threshold (% of pixels)"
          type="number"
          inputMode="decimal"
          min={THRESHOLD_MIN_PERCENT}
          max={THRESHOLD_MAX_PERCENT}
          step="any"
          value={values.thresholdPercent}
          onValueChange={(v) => set('thresholdPercent', v as V['thresholdPercent'])}
          hint={
            <>
              A run counts as changed when at least this share of its pixels differs from the last
              run's image ({THRESHOLD_MIN_PERCENT}% to {THRESHOLD_MAX_PERCENT}%).
            </>
          }
        />
      </div>
      {values.ignoreSelectors !== undefined && (
        <TextAreaField
          label="Ignore (CSS selectors, one a line)"
          mono
          rows={2}
          spellCheck={false}
          placeholder={'#clock\n.ad-banner'}
          value={values.ignoreSelectors}
          onValueChange={(v) => set('ignoreSelectors', v as V['ignoreSelectors'])}
          hint={<>Hidden before each capture, so a clock or an ad does not count as a change.</>}
        />
      )}
      <InputField
        label="Webhook URL (optional)"
        type="text"
        inputMode="url"
        spellCheck={false}
        placeholder="https://hooks.example.com/shots"
        value={values.webhookUrl}
        onValueChange={(v) => set('webhookUrl', v as V['webhookUrl'])}
        hint={
          <>
            Receives <code>monitor.changed</code> and <code>monitor.failed</code>, signed with the
            secret on the Webhooks page.
          </>
        }
      />
    </>
  );
}
