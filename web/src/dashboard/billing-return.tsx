import { useEffect, useRef, useState } from 'react';
import { useSession } from './session.tsx';
import { Notice } from './ui.tsx';

export type BillingReturn = 'success' | 'cancel';

/**
 * The payment provider sends the browser back to /dashboard?billing=success|cancel. Read it
 * once and drop it from the address, so a reload does not repeat the message.
 */
export function takeBillingReturn(): BillingReturn | null {
  const url = new URL(window.location.href);
  const value = url.searchParams.get('billing');
  if (value === null) return null;
  url.searchParams.delete('billing');
  window.history.replaceState(null, '', `${url.pathname}${url.search}${url.hash}`);
  return value === 'success' || value === 'cancel' ? value : null;
}

const POLL_MS = 1_000;
const POLL_LIMIT = 30;

/**
 * After paying, the plan changes when the provider's webhook arrives, not on the way back:
 * wait for it, saying so, then confirm.
 */
export function BillingReturnNotice({
  outcome,
  onDismiss,
}: {
  outcome: BillingReturn;
  onDismiss: () => void;
}) {
  const { user, refreshUser } = useSession();
  const [gaveUp, setGaveUp] = useState(false);
  const waiting = outcome === 'success' && user.plan !== 'pro' && !gaveUp;
  // The session object changes on every refresh; the poll must not restart with it.
  const refresh = useRef(refreshUser);
  refresh.current = refreshUser;

  useEffect(() => {
    if (!waiting) return;
    let polls = 0;
    const timer = window.setInterval(() => {
      polls += 1;
      if (polls > POLL_LIMIT) setGaveUp(true);
      else void refresh.current();
    }, POLL_MS);
    return () => window.clearInterval(timer);
  }, [waiting]);

  if (outcome === 'cancel') {
    return (
      <Notice tone="info" onDismiss={onDismiss}>
        Checkout cancelled. Nothing was charged, and you are still on the Free plan.
      </Notice>
    );
  }
  if (user.plan === 'pro') {
    return (
      <Notice tone="success" onDismiss={onDismiss}>
        <strong>You are on Pro now.</strong> The new quota, rate limit and options apply to your
        existing keys from the next request.
      </Notice>
    );
  }
  if (gaveUp) {
    return (
      <Notice tone="warning" onDismiss={onDismiss}>
        The payment provider has not confirmed the payment yet. Reload this page in a minute; the
        plan changes as soon as it does.
      </Notice>
    );
  }
  return (
    <Notice tone="info">
      <span className="spinner" aria-hidden="true" /> Payment received. Waiting for the payment
      provider to confirm it; your plan switches to Pro in a moment.
    </Notice>
  );
}
