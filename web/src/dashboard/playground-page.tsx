import type { DestinationList } from '../api/types.ts';
import { fetchDevices } from '../shared/devices.ts';
import { fetchPlans, type Plan } from '../shared/plans.ts';
import { CurlCard } from './playground/curl-card.tsx';
import { KeyField } from './playground/key-field.tsx';
import {
  DeviceSection,
  PageActionsSection,
  PageContextSection,
  RequestsSection,
  StorageSection,
} from './playground/option-sections.tsx';
import { RequestForm } from './playground/request-form.tsx';
import { ResultCard } from './playground/result-card.tsx';
import { usePlayground } from './playground/use-playground.ts';
import { useSession } from './session.tsx';
import { PageTitle, useResource } from './ui.tsx';

/**
 * The playground: a real capture with one of the account's keys, the same request shown as
 * curl beside it, and the answer below. Its parts are in playground/: the request and its
 * body (capture-body.ts, pure), the state (use-playground.ts), the form and its sections,
 * the curl card and the result card. The account's storage destinations are read by session
 * for the storage section; the capture itself goes with the key alone.
 */
export function PlaygroundPage() {
  const { user, call, createdKeys } = useSession();
  const plans = useResource((signal) => fetchPlans(signal));
  const devices = useResource((signal) => fetchDevices(signal));
  const plan: Plan | undefined = plans.data?.find((p) => p.name === user.plan);
  // Until the plans load, the plan's name decides; a plan without destinations reads none.
  const storage = plan ? plan.storage_destinations > 0 : user.plan !== 'free';
  const destinations = useResource(
    async (signal) =>
      storage
        ? (await call<DestinationList>('/v1/account/storage-destinations', { signal })).data
        : [],
    String(storage),
  );
  const latestKey = Object.entries(createdKeys).sort(([a], [b]) => Number(b) - Number(a))[0]?.[1];
  const playground = usePlayground(latestKey ?? '');

  return (
    <>
      <PageTitle title="Playground">Playground</PageTitle>
      <p className="page-intro">
        Run a real capture with one of your keys. It counts against your quota like any other
        request.
      </p>
      <div className="playground">
        <section className="card" aria-labelledby="pg-options">
          <h2 id="pg-options" className="card-title">
            Request
          </h2>
          <RequestForm
            form={playground.form}
            plan={plan}
            pro={user.plan === 'pro'}
            busy={playground.busy}
            onSubmit={playground.run}
            keyField={
              <KeyField
                value={playground.key}
                onChange={playground.setKey}
                fromThisTab={Boolean(latestKey)}
              />
            }
          >
            <DeviceSection form={playground.form} devices={devices.data ?? []} />
            <PageContextSection form={playground.form} pro={user.plan === 'pro'} />
            <PageActionsSection form={playground.form} />
            <RequestsSection form={playground.form} />
            {storage && (
              <StorageSection
                form={playground.form}
                destinations={destinations.data}
                error={destinations.error}
              />
            )}
          </RequestForm>
        </section>

        <div className="stack">
          <CurlCard body={playground.body} apiKey={playground.trimmedKey} path={playground.path} />
          <ResultCard
            busy={playground.busy}
            error={playground.error}
            result={playground.result}
            batch={playground.batch}
          />
        </div>
      </div>
    </>
  );
}
