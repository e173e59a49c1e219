import { type FormEvent, useEffect, useState } from 'react';
import type { Monitor } from '../../api/types.ts';
import type { Device } from '../../shared/devices.ts';
import type { Plan } from '../../shared/plans.ts';
import {
  DeviceSection,
  PageActionsSection,
  PageContextSection,
  RequestsSection,
} from '../playground/option-sections.tsx';
import { useOptionsForm } from '../playground/options-form.ts';
import { CaptureFields } from '../playground/request-form.tsx';
import { useSession } from '../session.tsx';
import { Notice } from '../ui.tsx';
import {
  DEFAULT_SETTINGS,
  formProblem,
  MONITOR_OPTIONS,
  type MonitorSettings,
  monitorBody,
} from './monitor-body.ts';
import { MonitorFields } from './monitor-fields.tsx';

/**
 * A new monitor: what to capture with the playground's own fields and sections (less what a
 * monitor cannot take), then how often, how much change counts, what to ignore and where to
 * send events. Sent by session to POST /v1/account/monitors.
 */
export function CreateMonitorForm({
  plan,
  pro,
  devices,
  onCreated,
  onCancel,
}: {
  plan: Plan | undefined;
  pro: boolean;
  devices: readonly Device[];
  onCreated(monitor: Monitor): void;
  /** Absent when the form is the page's only way to start (no monitors yet). */
  onCancel?: () => void;
}) {
  const { call } = useSession();
  const form = useOptionsForm(MONITOR_OPTIONS);
  const [settings, setSettings] = useState<MonitorSettings>(DEFAULT_SETTINGS);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  // A refusal speaks of the form as it was: a change to it clears the words.
  // biome-ignore lint/correctness/useExhaustiveDependencies: a change of either clears them.
  useEffect(() => setError(null), [form.options, settings]);

  const set = <K extends keyof MonitorSettings>(name: K, value: MonitorSettings[K]) =>
    setSettings((s) => ({ ...s, [name]: value }));

  async function submit(event: FormEvent) {
    event.preventDefault();
    const problem = formProblem(form.options, settings);
    if (problem) {
      setError(problem);
      return;
    }
    setBusy(true);
    setError(null);
    try {
      const monitor = await call<Monitor>('/v1/account/monitors', {
        method: 'POST',
        body: monitorBody(form.options, settings),
      });
      form.reset();
      setSettings(DEFAULT_SETTINGS);
      onCreated(monitor);
    } catch (err) {
      setError(err instanceof Error ? err.message : 'The monitor could not be created.');
    } finally {
      setBusy(false);
    }
  }

  return (
    <form className="stack" onSubmit={submit} noValidate>
      <CaptureFields form={form} plan={plan} pro={pro} kind="monitor" />
      <MonitorFields values={settings} set={set} plan={plan} />
      <DeviceSection form={form} devices={devices} />
      <PageContextSection form={form} pro={pro} />
      <PageActionsSection form={form} kind="monitor" />
      <RequestsSection form={form} />
      {error && <Notice tone="error">{error}</Notice>}
      <div className="actions">
        <button type="submit" className="btn btn-primary" disabled={busy}>
          {busy ? 'Creating…' : 'Create monitor'}
        </button>
        {onCancel && (
          <button type="button" className="btn btn-secondary" onClick={onCancel} disabled={busy}>
            Cancel
          </button>
        )}
      </div>
    </form>
  );
}
