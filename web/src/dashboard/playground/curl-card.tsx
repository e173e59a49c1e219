import { CopyButton } from '../../shared/copy-button.tsx';
import { curlCommand } from './capture-body.ts';

/**
 * The request as a curl command. The page shows the key's first characters only; the copied
 * command has all of it.
 */
export function CurlCard({
  body,
  apiKey,
  path,
}: {
  body: Record<string, unknown>;
  apiKey: string;
  path: string;
}) {
  const shownKey = apiKey ? `${apiKey.slice(0, 12)}…` : '$SHOTSMITH_KEY';
  return (
    <section className="card" aria-labelledby="pg-curl">
      <div className="card-head">
        <h2 id="pg-curl" className="card-title">
          As curl
        </h2>
        <CopyButton
          text={curlCommand(body, apiKey || '$SHOTSMITH_KEY', path)}
          label="Copy command"
        />
      </div>
      <figure className="code-figure" aria-label="The request as a curl command">
        <pre className="code code-wrap">
          <code>{curlCommand(body, shownKey, path)}</code>
        </pre>
      </figure>
      <p className="field-hint">The copied command includes the full key.</p>
    </section>
  );
}
