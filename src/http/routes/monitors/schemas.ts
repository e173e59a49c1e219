import { type Static, Type } from 'typebox';
import { BOUNDS } from '../../../domain/bounds.ts';
import { CaptureRequest } from '../../../domain/captures/capture-options.ts';
import { Selector } from '../../../domain/captures/options/selector-schema.ts';
import { listMonitors } from '../../../domain/monitors/manage-monitors.ts';
import { monitorAnswer, runAnswer } from '../../../domain/monitors/monitor-answer.ts';
import { EVERY_NAMES, MIN_THRESHOLD } from '../../../domain/monitors/monitor-rules.ts';
import type { MonitorContext } from '../../../domain/monitors/ports.ts';
import type { User } from '../../../domain/store.ts';
import { CursorPage, cursorPage } from '../../schemas.ts';
import { ListQuery } from '../screenshots/schemas.ts';

export { ListQuery };

/** A monitor's capture options: the capture body without its target and delivery fields. */
const MonitorOptions = Type.Omit(CaptureRequest, [
  'url',
  'html',
  'markdown',
  'async',
  'response_type',
  'webhook_url',
]);

const Every = Type.Union(
  EVERY_NAMES.map((e) => Type.Literal(e)),
  { description: "How often it runs; not below the plan's min_monitor_interval." },
);
const Threshold = Type.Number({
  minimum: MIN_THRESHOLD,
  maximum: 1,
  description: 'The share of pixels that must change for a run to count as changed.',
});
const Name = Type.String({ minLength: 1, maxLength: BOUNDS.monitors.nameMaxLength });
const WebhookUrl = Type.String({
  maxLength: BOUNDS.capture.urlMaxLength,
  description: 'Where monitor.changed and monitor.failed are sent (Standard Webhooks).',
});

export const CreateMonitorBody = Type.Object(
  {
    name: Type.Optional(Name),
    url: Type.Optional(CaptureRequest.properties.url),
    html: Type.Optional(CaptureRequest.properties.html),
    options: Type.Optional(MonitorOptions),
    every: Every,
    threshold: Type.Optional({ ...Threshold, default: 0.001 }),
    ignore_selectors: Type.Optional(
      Type.Array(Selector, {
        maxItems: BOUNDS.capture.maxHideSelectors,
        description: 'Hidden before each capture, like hide_selectors.',
      }),
    ),
    webhook_url: Type.Optional(WebhookUrl),
  },
  { additionalProperties: false },
);

export const UpdateMonitorBody = Type.Object(
  {
    name: Type.Optional(Name),
    status: Type.Optional(Type.Union([Type.Literal('active'), Type.Literal('paused')])),
    every: Type.Optional(Every),
    threshold: Type.Optional(Threshold),
    webhook_url: Type.Optional(Type.Union([WebhookUrl, Type.Null()])),
  },
  { additionalProperties: false },
);

const Iso = Type.String({ format: 'date-time' });

export const MonitorItem = Type.Object({
  id: Type.String({ description: 'The monitor id (`mon_...`).' }),
  name: Type.Union([Type.String(), Type.Null()]),
  url: Type.Optional(Type.String({ description: "A URL monitor's target." })),
  html_bytes: Type.Optional(
    Type.Integer({
      minimum: 0,
      description:
        "An html monitor's document size in UTF-8 bytes. The document itself is kept for the runs and never answered.",
    }),
  ),
  html_sha256: Type.Optional(
    Type.String({
      pattern: '^[0-9a-f]{64}$',
      description: "The SHA-256 (hex) of an html monitor's document, as UTF-8.",
    }),
  ),
  options: Type.Record(Type.String(), Type.Unknown()),
  every: Type.String(),
  threshold: Type.Number(),
  ignore_selectors: Type.Array(Type.String()),
  webhook_url: Type.Optional(Type.String()),
  status: Type.Union([
    Type.Literal('active'),
    Type.Literal('paused'),
    Type.Literal('paused_quota'),
  ]),
  next_run_at: Iso,
  created_at: Iso,
  last_run_at: Type.Union([Iso, Type.Null()]),
  last_change_at: Type.Union([Iso, Type.Null()]),
});

export const RunItem = Type.Object({
  id: Type.String({ description: 'The run id (`run_...`).' }),
  at: Iso,
  status: Type.Union([Type.Literal('running'), Type.Literal('succeeded'), Type.Literal('failed')]),
  changed: Type.Union([Type.Boolean(), Type.Null()]),
  changed_fraction: Type.Union([Type.Number(), Type.Null()]),
  image_url: Type.Union([Type.String(), Type.Null()]),
  diff_url: Type.Optional(Type.String()),
  error: Type.Optional(Type.String()),
});

export const MonitorParams = Type.Object({
  id: Type.String({ maxLength: 64, description: 'The monitor id (`mon_...`).' }),
});

export const MonitorPage = CursorPage(MonitorItem);

export const RunPage = CursorPage(RunItem);

export const monitorItem = (m: Parameters<typeof monitorAnswer>[0]) =>
  monitorAnswer(m) as Static<typeof MonitorItem>;
export const runItem = (r: Parameters<typeof runAnswer>[0]) =>
  runAnswer(r) as Static<typeof RunItem>;

export async function monitorPage(
  ctx: MonitorContext,
  user: User,
  query: Static<typeof ListQuery>,
): Promise<Static<typeof MonitorPage>> {
  const page = await listMonitors(ctx, {
    user,
    limit: query.limit ?? BOUNDS.listing.defaultPageSize,
    cursor: query.cursor,
  });
  return cursorPage(page, monitorItem);
}
