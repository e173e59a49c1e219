/** Period ends: subscriptions set to cancel end, the others renew (as Stripe's would). */

import { BOUNDS } from '../../../domain/bounds.ts';
import type { LocalContext, LocalSubscription } from './records.ts';

/** Renews subscriptions whose period ended, or ends those set to cancel; how many moved. */
export async function settleDue(ctx: LocalContext): Promise<number> {
  const { store, events } = ctx;
  const now = ctx.clock();
  let moved = 0;
  for (const sub of await store.due(now, BOUNDS.billing.localSettleBatch)) {
    const from = sub.currentPeriodEnd;
    if (sub.cancelAtPeriodEnd) {
      const ended: LocalSubscription = { ...sub, status: 'canceled', updatedAt: now };
      // Deliver first, then record: a failed delivery is retried by the next run, and
      // the fixed event id makes the retry harmless.
      await events.subscriptionEnded(ended);
      if (await store.advance(sub.id, from, ended)) moved++;
      continue;
    }
    // Periods count from the start date (the billing anchor), as Stripe's do, so a
    // subscription started on the 31st renews on the last day of shorter months.
    let k = 1;
    while (addMonths(sub.createdAt, k) <= now) k++;
    const renewed: LocalSubscription = {
      ...sub,
      currentPeriodStart: addMonths(sub.createdAt, k - 1),
      currentPeriodEnd: addMonths(sub.createdAt, k),
      updatedAt: now,
    };
    await events.subscriptionRenewed(renewed);
    if (await store.advance(sub.id, from, renewed)) moved++;
  }
  return moved;
}

/** The same time `n` calendar months later (UTC), the day clamped to the month's length. */
export function addMonths(ms: number, n: number): number {
  const d = new Date(ms);
  const year = d.getUTCFullYear();
  const month = d.getUTCMonth() + n;
  const lastDay = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
  return Date.UTC(
    year,
    month,
    Math.min(d.getUTCDate(), lastDay),
    d.getUTCHours(),
    d.getUTCMinutes(),
    d.getUTCSeconds(),
    d.getUTCMilliseconds(),
  );
}
