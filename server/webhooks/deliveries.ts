// The delivery job (server/jobs/runner.ts runs it): claims due deliveries fairly, sends each (sender.ts) and records
// the attempt and what follows (retry, success, give up, the endpoint policy), guarded by its claim. Everything is
// in rows, so a restart or a kill -9 loses nothing: a claim whose process died runs out and is taken again, and the
// lease columns are the ones the previous release's worker uses, so both can run on one database.
//
// Fair by construction: one claim statement takes at most a few due deliveries per endpoint, bounded by what the
// endpoint has in flight in every instance (WEBHOOK_ENDPOINT_CONCURRENCY; 1 while it is failing), and by what the
// account has in flight in this process (WEBHOOK_ACCOUNT_CONCURRENCY), and orders them round-robin: every account's
// first candidate before any account's second, each account's candidates alternating over its endpoints. So one
// account's hanging receivers hold at most its share of the pool, and its retries queue behind others' new work.
import { sql } from 'kysely';
import type { Database } from '../db/database.js';
import { engineOf } from '../db/database.js';
import type { Job } from '../jobs/runner.js';
import type { Logger } from '../logger.js';
import { disableEndpoint, disableReasonAfterFailure } from './endpoint-policy.js';
import { DELIVERIES_TOPIC } from './fan-out.js';
import { honoursRetryAfter, parseRetryAfter, retryDelayMs } from './schedule.js';
import { type AttemptResult, sendAttempt } from './sender.js';
import type { WebhookSettings } from './settings.js';
import { webhookHeaders } from './signature.js';

export type DeliveryOutcome = 'succeeded' | 'retrying' | 'gave_up' | 'gone' | 'cancelled';

export interface DeliveryObserver {
  /** Called once per attempt (or cancellation), with its outcome and latency. */
  attempted(outcome: DeliveryOutcome, latencyMs: number): void;
}

export interface ClaimedDelivery {
  id: number;
  endpoint_id: number;
  event_id: number;
  attempts: number;
  forced: number;
}

/** How long a claim holds beyond the attempt's own time limit (recording it included). */
const LEASE_MARGIN_MS = 5_000;

export type FairnessSettings = Pick<WebhookSettings, 'endpointConcurrency' | 'accountConcurrency'>;

/** Claims up to `limit` due deliveries for `worker`, fairly between accounts and endpoints (see above). */
export async function claimDeliveries(
  db: Database,
  { limit, worker, leaseMs, now = new Date() }: { limit: number; worker: string; leaseMs: number; now?: Date },
  { endpointConcurrency, accountConcurrency }: FairnessSettings,
): Promise<ClaimedDelivery[]> {
  if (limit <= 0) return [];
  const at = now.toISOString();
  const lease = new Date(now.getTime() + leaseMs).toISOString();
  const perEndpoint = Math.max(1, endpointConcurrency);
  // The k-th due delivery of each endpoint (k < perEndpoint), one index probe per endpoint and k.
  const nth = (k: number) => sql`
    select e.id as endpoint_id, e.account_id, e.failing_since, (
      select x.id from webhook_deliveries x
      where x.endpoint_id = e.id and x.state = 'pending' and x.next_attempt_at <= ${at}
        and (x.claimed_until is null or x.claimed_until < ${at})
      order by x.next_attempt_at, x.id limit 1 offset ${k}
    ) as id
    from webhook_endpoints e`;
  const candidates = sql.join(
    Array.from({ length: perEndpoint }, (_, k) => nth(k)),
    sql` union all `,
  );
  const fair = sql`
    with endpoint_busy as (
      select endpoint_id, count(*) as n from webhook_deliveries
      where claimed_until > ${at}
      group by endpoint_id
    ),
    account_busy as (
      select e.account_id, count(*) as n
      from webhook_deliveries d join webhook_endpoints e on e.id = d.endpoint_id
      where d.claimed_until > ${at} and d.claimed_by = ${worker}
      group by e.account_id
    ),
    candidates as (
      select c.id, c.endpoint_id, c.account_id, d.next_attempt_at,
        (case when c.failing_since is null then ${perEndpoint} else 1 end) - coalesce(eb.n, 0) as endpoint_room,
        ${Math.max(1, accountConcurrency)} - coalesce(ab.n, 0) as account_room
      from (${candidates}) c
      join webhook_deliveries d on d.id = c.id
      left join endpoint_busy eb on eb.endpoint_id = c.endpoint_id
      left join account_busy ab on ab.account_id = c.account_id
    ),
    ranked as (
      select id, account_id, next_attempt_at, endpoint_room, account_room,
        row_number() over (partition by endpoint_id order by next_attempt_at, id) as at_endpoint
      from candidates
    ),
    allowed as (
      select id, next_attempt_at, account_room, at_endpoint,
        row_number() over (partition by account_id order by at_endpoint, next_attempt_at, id) as at_account
      from ranked
      where at_endpoint <= endpoint_room
    )
    select id from allowed
    where at_account <= account_room
    order by at_account, next_attempt_at, id
    limit ${limit}`;
  // PostgreSQL: instances skip each other's rows instead of queueing behind them (FOR UPDATE cannot share a level
  // with the window functions, so it is a level of its own). SQLite: the chosen rows by their ids, not by a scan of
  // every pending row (NOT INDEXED keeps the rowid lookup).
  const postgres = engineOf(db) === 'postgres';
  const chosen = postgres ? sql`select id from webhook_deliveries where id in (${fair}) for update skip locked` : fair;
  const statement = sql<ClaimedDelivery>`
    update webhook_deliveries ${postgres ? sql`` : sql`not indexed`} set claimed_by = ${worker}, claimed_until = ${lease}
    where id in (${chosen})
      and state = 'pending' and (claimed_until is null or claimed_until < ${at})
    returning id, endpoint_id, event_id, attempts, forced`;
  const { rows } = await statement.execute(db);
  return rows.map((row) => ({
    id: Number(row.id),
    endpoint_id: Number(row.endpoint_id),
    event_id: Number(row.event_id),
    attempts: Number(row.attempts),
    forced: Number(row.forced),
  }));
}

/** Text a database column can hold on both engines: no NUL (PostgreSQL refuses it), no lone surrogate. */
export function storableText(text: string): string {
  return text.replaceAll('\u0000', '\uFFFD').toWellFormed();
}

/** The delivery job: fair claims, one attempt per claimed delivery, its record. */
export function deliveryJob(
  db: Database,
  settings: WebhookSettings,
  { logger, observer, random = Math.random }: { logger: Logger; observer?: DeliveryObserver; random?: () => number },
): Job<ClaimedDelivery> {
  return {
    name: 'webhook deliveries',
    concurrency: settings.concurrency,
    wakeOn: [DELIVERIES_TOPIC],
    pollMs: settings.pollMs,
    claim: (limit, worker) =>
      claimDeliveries(db, { limit, worker, leaseMs: settings.timeoutMs + LEASE_MARGIN_MS }, settings),
    run: (delivery, worker) => deliver(db, settings, delivery, worker, { logger, observer, random }),
  };
}

async function deliver(
  db: Database,
  settings: WebhookSettings,
  delivery: ClaimedDelivery,
  worker: string,
  { logger, observer, random }: { logger: Logger; observer?: DeliveryObserver; random: () => number },
): Promise<void> {
  const endpoint = await db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('id', '=', delivery.endpoint_id)
    .executeTakeFirst();
  const event = await db
    .selectFrom('events')
    .select(['public_id', 'payload'])
    .where('id', '=', delivery.event_id)
    .executeTakeFirst();
  if (!endpoint || !event) return; // deleted meanwhile; its deliveries went with it
  if (endpoint.status === 'disabled' && !delivery.forced) {
    await db
      .updateTable('webhook_deliveries')
      .set({ state: 'cancelled', claimed_by: null, claimed_until: null })
      .where('id', '=', delivery.id)
      .where('claimed_by', '=', worker)
      .execute();
    observer?.attempted('cancelled', 0);
    return;
  }
  const now = Date.now();
  const secrets = [endpoint.secret];
  const overlapEnds = endpoint.previous_secret_until && new Date(endpoint.previous_secret_until).getTime();
  if (endpoint.previous_secret && overlapEnds && overlapEnds > now) secrets.push(endpoint.previous_secret);
  const attemptedAt = new Date(now).toISOString();
  const size = Buffer.byteLength(event.payload);
  // Too large is final: no retry can make it smaller (the guide: "fail their delivery at once").
  const tooLarge = size > settings.maxPayloadBytes;
  const result: AttemptResult = tooLarge
    ? { error: `payload of ${size} bytes is over the limit of ${settings.maxPayloadBytes}`, latencyMs: 0 }
    : await sendAttempt(
        endpoint.url,
        event.payload,
        webhookHeaders(secrets, event.public_id, Math.floor(now / 1000), event.payload),
        { timeoutMs: settings.timeoutMs, allowPrivate: settings.allowPrivateTargets },
      );
  const outcome = await record(db, settings, delivery, worker, {
    endpointId: endpoint.id,
    attemptedAt,
    result,
    failingSince: endpoint.failing_since,
    final: tooLarge,
    random,
    logger,
  });
  if (outcome) observer?.attempted(outcome, result.latencyMs);
  logger.debug('webhook attempt', {
    delivery_id: delivery.id,
    endpoint_id: endpoint.id,
    event_id: event.public_id,
    attempt: delivery.attempts + 1,
    status: result.status ?? null,
    latency_ms: result.latencyMs,
    outcome: outcome ?? 'lost_claim',
    ...(result.error ? { error: result.error } : {}),
  });
}

/**
 * Records the attempt and its consequences if `worker` still holds the claim; the outcome, or undefined. A delivery
 * cancelled while its attempt was under way (its endpoint disabled) stays cancelled, its attempt recorded.
 */
async function record(
  db: Database,
  settings: WebhookSettings,
  delivery: ClaimedDelivery,
  worker: string,
  {
    endpointId,
    attemptedAt,
    result,
    failingSince,
    final,
    random,
    logger,
  }: {
    endpointId: number;
    attemptedAt: string;
    result: AttemptResult;
    failingSince: string | Date | null;
    final: boolean;
    random: () => number;
    logger: Logger;
  },
): Promise<DeliveryOutcome | undefined> {
  const attempt = delivery.attempts + 1;
  const now = Date.now();
  const ok = result.status !== undefined && result.status >= 200 && result.status < 300;
  const gone = result.status === 410;
  const retryAfter =
    result.status !== undefined && honoursRetryAfter(result.status)
      ? parseRetryAfter(result.retryAfter, now)
      : undefined;
  const delay = ok || gone || final ? undefined : retryDelayMs(attempt, settings.retryScheduleS, random(), retryAfter);
  // Never due in the past: a retry is at least a moment after the attempt was recorded.
  const nextAttemptAt = delay === undefined ? null : new Date(now + Math.max(delay, 1)).toISOString();
  const outcome: DeliveryOutcome = ok ? 'succeeded' : gone ? 'gone' : nextAttemptAt ? 'retrying' : 'gave_up';
  const state = outcome === 'succeeded' ? 'succeeded' : outcome === 'retrying' ? 'pending' : 'failed';
  return db.transaction().execute(async (trx) => {
    const [row] = await trx
      .updateTable('webhook_deliveries')
      .set({
        state: sql`case when state = 'cancelled' then state else ${state} end`,
        attempts: attempt,
        next_attempt_at: nextAttemptAt ?? attemptedAt,
        claimed_by: null,
        claimed_until: null,
      })
      .where('id', '=', delivery.id)
      .where('claimed_by', '=', worker)
      .returning('state')
      .execute();
    if (!row) return undefined; // the claim ran out and another process took it
    await trx
      .insertInto('webhook_attempts')
      .values({
        delivery_id: delivery.id,
        endpoint_id: endpointId,
        attempt,
        attempted_at: attemptedAt,
        status: ok ? 'succeeded' : 'failed',
        response_status: result.status ?? null,
        latency_ms: result.latencyMs,
        response_body: result.body === undefined ? null : storableText(result.body),
        error: result.error === undefined ? null : storableText(result.error),
        next_attempt_at: row.state === 'pending' ? nextAttemptAt : null,
      })
      .execute();
    if (ok) {
      if (failingSince) {
        await trx.updateTable('webhook_endpoints').set({ failing_since: null }).where('id', '=', endpointId).execute();
      }
      return row.state === 'cancelled' ? 'cancelled' : outcome;
    }
    const disable = disableReasonAfterFailure(result.status, failingSince, now, settings.disableAfterMs);
    if (disable) await disableEndpoint(trx, endpointId, disable, new Date(now), logger);
    else if (!failingSince) {
      await trx
        .updateTable('webhook_endpoints')
        .set({ failing_since: attemptedAt })
        .where('id', '=', endpointId)
        .execute();
    }
    return row.state === 'cancelled' ? 'cancelled' : outcome;
  });
}
