// The delivery job (server/jobs/runner.ts runs it): claims due deliveries fairly, sends each (sender.ts) and records
// the attempt and what follows (retry, success, give up, the endpoint policy), guarded by its claim, in its next
// claim's transaction with the other attempts finished meanwhile (attempt-records.ts). Everything is
// in rows, so a restart or a kill -9 loses nothing: a claim whose process died runs out and is taken again, and the
// lease columns are the ones the previous release's worker uses, so both can run on one database.
//
// Fair by construction: one claim statement takes at most a few due deliveries per endpoint, bounded by what the
// endpoint has in flight in every instance (WEBHOOK_ENDPOINT_CONCURRENCY; 1 while it is failing, and while a
// recovery's deliveries are queued for it, so that they arrive oldest first; its rate_limit; none while its
// receiver's Retry-After runs), and by what the
// account has in flight in this process (WEBHOOK_ACCOUNT_CONCURRENCY), and orders them round-robin: every account's
// first candidate before any account's second, each account's candidates alternating over its endpoints. So one
// account's hanging receivers hold at most its share of the pool, and its retries queue behind others' new work.
import { type ClaimedDelivery, claimFairDeliveries } from '../db/claims.js';
import type { Database } from '../db/database.js';
import { precompiledOnAny } from '../db/precompiled.js';
import type { Job } from '../jobs/runner.js';
import type { Logger } from '../logger.js';
import { inSpan } from '../tracing.js';
import { type DeliveryOutcome, type FinishedAttempt, recordAttempts } from './attempt-records.js';
import { DELIVERIES_TOPIC, wants } from './fan-out.js';
import { type AttemptResult, sendAttempt } from './sender.js';
import type { WebhookSettings } from './settings.js';
import { webhookHeaders } from './signature.js';

export interface DeliveryObserver {
  /** Called once per attempt (or cancellation), with its outcome and latency. */
  attempted(outcome: DeliveryOutcome, latencyMs: number): void;
}

export type { ClaimedDelivery };

/** How long a claim holds beyond the attempt's own time limit (recording it included). */
const LEASE_MARGIN_MS = 5_000;

export type FairnessSettings = Pick<WebhookSettings, 'endpointConcurrency' | 'accountConcurrency'>;

/** Claims up to `limit` due deliveries for `worker`, fairly between accounts and endpoints (see above). */
export function claimDeliveries(
  db: Database,
  claim: { limit: number; worker: string; leaseMs: number; now?: Date },
  fairness: FairnessSettings,
): Promise<ClaimedDelivery[]> {
  return claimFairDeliveries(db, claim, fairness);
}

/** The delivery job: fair claims, one attempt per claimed delivery, recorded before the next claim (attempt-records.ts). */
export function deliveryJob(
  db: Database,
  settings: WebhookSettings,
  { logger, observer, random = Math.random }: { logger: Logger; observer?: DeliveryObserver; random?: () => number },
): Job<ClaimedDelivery, FinishedAttempt> {
  const leaseMs = settings.timeoutMs + LEASE_MARGIN_MS;
  return {
    name: 'webhook deliveries',
    concurrency: settings.concurrency,
    wakeOn: [DELIVERIES_TOPIC],
    pollMs: settings.pollMs,
    // In the runner's transaction when it has just recorded finished attempts (`record`): the claim sees the places
    // they freed.
    claim: (limit, worker, trx) => claimDeliveries(trx ?? db, { limit, worker, leaseMs }, settings),
    // The attempts finished since the last claim, recorded in the transaction the runner then claims in; an attempt
    // the runner cannot record even alone stays claimed until its lease runs out, then is sent again (at least once).
    async record(finished, trx, worker) {
      const outcomes = await recordAttempts(trx, settings, worker, finished, { random, logger });
      return () =>
        finished.forEach((attempt, i) => {
          const outcome = outcomes[i];
          if (outcome) observer?.attempted(outcome, attempt.result.latencyMs);
          logger.debug('webhook attempt', {
            delivery_id: attempt.delivery.id,
            endpoint_id: attempt.endpointId,
            attempt: attempt.delivery.attempts + 1,
            status: attempt.result.status ?? null,
            latency_ms: attempt.result.latencyMs,
            outcome: outcome ?? 'lost_claim',
            ...(attempt.result.error ? { error: attempt.result.error } : {}),
          });
        });
    },
    describe: (attempt) => ({ delivery_id: attempt.delivery.id }),
    run: (delivery, worker) => attemptDelivery(db, settings, delivery, worker, observer),
  };
}

// The endpoint, the event and the delivery's state in one read (one snapshot: an endpoint update's url, its
// enabled_events and the deliveries it cancelled are seen together); compiled once per engine (db/precompiled.ts).
const endpointAndEvent = precompiledOnAny((db, endpointId: number, eventId: number, deliveryId: number) =>
  db
    .selectFrom('webhook_endpoints')
    .innerJoin('events', (join) => join.on('events.id', '=', eventId))
    .innerJoin('webhook_deliveries', (join) => join.on('webhook_deliveries.id', '=', deliveryId))
    .select([
      'webhook_endpoints.id',
      'webhook_endpoints.url',
      'webhook_endpoints.status',
      'webhook_endpoints.enabled_events',
      'webhook_deliveries.state',
      'webhook_endpoints.secret',
      'webhook_endpoints.previous_secret',
      'webhook_endpoints.previous_secret_until',
      'webhook_endpoints.failing_since',
      'webhook_endpoints.failing_notice_at',
      'webhook_endpoints.headers',
      'events.public_id',
      'events.type',
      'events.payload',
      'events.trace_parent',
    ])
    .where('webhook_endpoints.id', '=', endpointId),
);

/**
 * Whether a claimed delivery is still to be sent, as its endpoint is now: not if it was cancelled meanwhile (an
 * update that stopped the type), nor if the endpoint no longer takes its type (unless forced: a test, or a
 * redelivery by name, which a key holding the type's read scope asked for), nor to a disabled endpoint unless forced.
 */
function stillToSend(
  row: { state: string; status: string; enabled_events: string; type: string },
  forced: boolean,
): boolean {
  if (row.state !== 'pending') return false;
  return forced || (row.status === 'enabled' && wants(row.enabled_events, row.type));
}

/**
 * Sends one attempt of `delivery` and returns it for recording; one no longer to send (`stillToSend`) is cancelled,
 * never sent.
 */
async function attemptDelivery(
  db: Database,
  settings: WebhookSettings,
  delivery: ClaimedDelivery,
  worker: string,
  observer: DeliveryObserver | undefined,
): Promise<FinishedAttempt | undefined> {
  const [endpoint] = await endpointAndEvent(db, delivery.endpoint_id, delivery.event_id, delivery.id);
  if (!endpoint) return undefined; // the endpoint or the event was deleted meanwhile; its deliveries went with it
  // The attempt's span continues the trace of the request that wrote the event (tracing.ts); the request it sends
  // carries that trace's traceparent (the http instrumentation's client span).
  return inSpan(
    'webhook delivery attempt',
    {
      parent: endpoint.trace_parent,
      kind: 'producer',
      attributes: {
        'dss.webhook.endpoint.id': Number(endpoint.id),
        'dss.webhook.delivery.id': delivery.id,
        'dss.event.id': endpoint.public_id,
        'dss.webhook.attempt': delivery.attempts + 1,
      },
    },
    async (span) => {
      const attempt = await sendOrCancel(db, settings, delivery, worker, observer, endpoint);
      if (span && attempt) {
        const { status, error } = attempt.result;
        if (status !== undefined) span.setAttribute('http.response.status_code', status);
        if (error !== undefined) span.setAttribute('error.type', error.split(':')[0] ?? 'error');
      }
      return attempt;
    },
  );
}

type EndpointAndEvent = NonNullable<Awaited<ReturnType<typeof endpointAndEvent>>[number]>;

async function sendOrCancel(
  db: Database,
  settings: WebhookSettings,
  delivery: ClaimedDelivery,
  worker: string,
  observer: DeliveryObserver | undefined,
  endpoint: EndpointAndEvent,
): Promise<FinishedAttempt | undefined> {
  const event = endpoint;
  if (!stillToSend(endpoint, delivery.forced === 1)) {
    await db
      .updateTable('webhook_deliveries')
      .set({ state: 'cancelled', claimed_by: null, claimed_until: null })
      .where('id', '=', delivery.id)
      .where('claimed_by', '=', worker)
      .execute();
    observer?.attempted('cancelled', 0);
    return undefined;
  }
  const now = Date.now();
  const secrets = [endpoint.secret];
  const overlapEnds = endpoint.previous_secret_until && new Date(endpoint.previous_secret_until).getTime();
  if (endpoint.previous_secret && overlapEnds && overlapEnds > now) secrets.push(endpoint.previous_secret);
  const size = Buffer.byteLength(event.payload);
  // Too large is final: no retry can make it smaller (the guide: "fail their delivery at once").
  const tooLarge = size > settings.maxPayloadBytes;
  const result: AttemptResult = tooLarge
    ? { error: `payload of ${size} bytes is over the limit of ${settings.maxPayloadBytes}`, latencyMs: 0 }
    : await sendAttempt(
        endpoint.url,
        event.payload,
        {
          // The endpoint's own headers (never logged), under the signature's, which they may not name.
          ...(endpoint.headers ? (JSON.parse(endpoint.headers) as Record<string, string>) : {}),
          ...webhookHeaders(secrets, event.public_id, Math.floor(now / 1000), event.payload),
        },
        { timeoutMs: settings.timeoutMs, allowPrivate: settings.allowPrivateTargets },
      );
  return {
    delivery,
    endpointId: Number(endpoint.id),
    attemptedAt: new Date(now).toISOString(),
    result,
    failingSince: endpoint.failing_since,
    failingNoticeAt: endpoint.failing_notice_at,
    final: tooLarge,
  };
}
