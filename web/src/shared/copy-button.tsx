import { useEffect, useRef, useState } from 'react';

/**
 * Copies `text` and says so (visibly and to screen readers). Falls back to a hidden
 * textarea where the async clipboard is unavailable (pages not served over https).
 */
export function CopyButton({
  text,
  label = 'Copy',
  className = 'btn btn-secondary',
  describedBy,
}: {
  text: string;
  label?: string;
  className?: string;
  describedBy?: string;
}) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  const timer = useRef<number | undefined>(undefined);
  useEffect(() => () => window.clearTimeout(timer.current), []);

  async function copy() {
    const ok = await copyText(text);
    setState(ok ? 'copied' : 'failed');
    window.clearTimeout(timer.current);
    timer.current = window.setTimeout(() => setState('idle'), ok ? 2500 : 6000);
  }

  return (
    <span className="copy">
      <button type="button" className={className} onClick={copy} aria-describedby={describedBy}>
        {state === 'copied' ? 'Copied' : label}
      </button>
      <span role="status" className={state === 'failed' ? 'copy-failed' : 'visually-hidden'}>
        {state === 'copied'
          ? 'Copied to the clipboard.'
          : state === 'failed'
            ? 'Could not copy. Select the text and copy it by hand.'
            : ''}
      </span>
    </span>
  );
}

export async function copyText(text: string): Promise<boolean> {
  try {
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch {
    // Denied: try the old way below.
  }
  const area = document.createElement('textarea');
  area.value = text;
  area.setAttribute('readonly', '');
  area.className = 'offscreen';
  document.body.append(area);
  area.select();
  try {
    return document.execCommand('copy');
  } catch {
    return false;
  } finally {
    area.remove();
  }
}
