// The claim statements of background work, one per job, which differ by engine: PostgreSQL's instances skip each
// other's rows (FOR UPDATE SKIP LOCKED) and probe each endpoint's due deliveries LATERAL; SQLite, one writer with
// no LATERAL, gathers them into a JSON array per endpoint and updates the chosen rows by id (NOT INDEXED keeps the
// rowid lookup). The jobs (webhooks/deliveries.ts, webhooks/recoveries.ts) call them by name.
import { sql } from 'kysely';
import { type Database, engineOf } from './database.js';

/** A delivery claimed for sending: what the attempt needs to find its endpoint and event. */
export interface ClaimedDelivery {
  id: number;
  endpoint_id: number;
  event_id: number;
  attempts: number;
  forced: number;
}

/** The bounds of a fair claim (WEBHOOK_ENDPOINT_CONCURRENCY, WEBHOOK_ACCOUNT_CONCURRENCY). */
export interface DeliveryFairness {
  endpointConcurrency: number;
  accountConcurrency: number;
}

/**
 * Claims up to `limit` due deliveries for `worker` until `now` + `leaseMs`, fairly between accounts and endpoints:
 * at most `endpointConcurrency` in flight per endpoint across instances (1 while it is failing or a recovery's
 * deliveries are queued for it; its rate_limit; none while its receiver's Retry-After runs), at most
 * `accountConcurrency` per account for this worker, round-robin (webhooks/deliveries.ts says why).
 */
export async function claimFairDeliveries(
  db: Database,
  { limit, worker, leaseMs, now = new Date() }: { limit: number; worker: string; leaseMs: number; now?: Date },
  { endpointConcurrency, accountConcurrency }: DeliveryFairness,
): Promise<ClaimedDelivery[]> {
  if (limit <= 0) return [];
  const at = now.toISOString();
  const lease = new Date(now.getTime() + leaseMs).toISOString();
  // An endpoint's rate_limit counts its attempts of the last second (recorded, across instances) and those in flight.
  const secondAgo = new Date(now.getTime() - 1000).toISOString();
  const perEndpoint = Math.max(1, endpointConcurrency);
  const postgres = engineOf(db) === 'postgres';
  // Each endpoint's first due deliveries (as many as it may ever have in flight: its room is applied below), in one
  // index probe; none for an endpoint at its bound. PostgreSQL joins them LATERAL; SQLite, which has no LATERAL,
  // gathers them into a JSON array per endpoint.
  const due = sql`
    select x.id from webhook_deliveries x
    where x.endpoint_id = e.id and x.state = 'pending' and x.next_attempt_at <= ${at}
      and (x.claimed_until is null or x.claimed_until < ${at})
    order by x.next_attempt_at, x.id limit ${perEndpoint}`;
  const candidates = postgres
    ? sql`
    select e.id as endpoint_id, e.account_id, e.endpoint_room, p.id
    from due_endpoints e cross join lateral (${due}) p`
    : sql`
    select e.id as endpoint_id, e.account_id, e.endpoint_room, p.value as id
    from due_endpoints e join json_each((select json_group_array(id) from (${due}))) p`;
  // MATERIALIZED keeps each step what it says: the deliveries in flight read once, through the index of claimed
  // rows (not a scan of every delivery kept), and the probes above run once per endpoint (not inside each join).
  const fair = sql`
    with claimed as materialized (
      select endpoint_id, claimed_by from webhook_deliveries
      where claimed_until > ${at}
    ),
    endpoint_busy as (
      select endpoint_id, count(*) as n from claimed
      group by endpoint_id
    ),
    account_busy as (
      select e.account_id, count(*) as n
      from claimed c join webhook_endpoints e on e.id = c.endpoint_id
      where c.claimed_by = ${worker}
      group by e.account_id
    ),
    endpoint_state as materialized (
      select e.id, e.account_id,
        (case when e.failing_since is null and not exists (
          select 1 from webhook_deliveries r
          where r.endpoint_id = e.id and r.state = 'pending' and r.recovery_id is not null
        ) then ${perEndpoint} else 1 end) - coalesce(eb.n, 0) as concurrency_room,
        case when e.rate_limit is null then ${perEndpoint} else e.rate_limit - coalesce(eb.n, 0) - (
          select count(*) from webhook_attempts a where a.endpoint_id = e.id and a.attempted_at > ${secondAgo}
        ) end as rate_room
      from webhook_endpoints e
      left join endpoint_busy eb on eb.endpoint_id = e.id
      where coalesce(eb.n, 0) < ${perEndpoint}
        and (e.paused_until is null or e.paused_until <= ${at})
        and exists (
          select 1 from webhook_deliveries x
          where x.endpoint_id = e.id and x.state = 'pending' and x.next_attempt_at <= ${at}
        )
    ),
    due_endpoints as materialized (
      select id, account_id,
        case when concurrency_room < rate_room then concurrency_room else rate_room end as endpoint_room
      from endpoint_state
      where concurrency_room > 0 and rate_room > 0
    ),
    probed as materialized (${candidates}),
    candidates as (
      select c.id, c.endpoint_id, c.account_id, d.next_attempt_at, c.endpoint_room,
        ${Math.max(1, accountConcurrency)} - coalesce(ab.n, 0) as account_room
      from probed c
      join webhook_deliveries d on d.id = c.id
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
  let chosen = sql`select id from webhook_deliveries where id in (${fair}) for update skip locked`;
  if (!postgres) {
    // SQLite: outside a transaction the choice is a read (beside the writer, in WAL), so a claim that finds nothing
    // writes nothing; the update below judges each chosen row again. Inside one (the claim that records attempts
    // first) it reads on the writer, and sees those records.
    const ids = await db.selectFrom(sql<{ id: number }>`(${fair})`.as('fair')).select('fair.id').execute();
    if (ids.length === 0) return [];
    chosen = sql.join(ids.map((row) => Number(row.id)));
  }
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

/**
 * Claims up to `limit` running recoveries whose lease is free for `worker` until `now` + `leaseMs`, at most one
 * per account, the one stepped longest ago first; their ids.
 */
export async function claimFreeRecoveries(
  db: Database,
  { limit, worker, leaseMs, now = new Date() }: { limit: number; worker: string; leaseMs: number; now?: Date },
): Promise<number[]> {
  const at = now.toISOString();
  const free = sql`
    select id from (
      select id, stepped_at,
        row_number() over (partition by account_id order by stepped_at, id) as at_account
      from webhook_recoveries
      where status = 'running' and (claimed_until is null or claimed_until < ${at})
    ) r where at_account = 1 order by stepped_at, id limit ${limit}`;
  const chosen =
    engineOf(db) === 'postgres'
      ? sql`select id from webhook_recoveries where id in (${free}) for update skip locked`
      : free;
  const { rows } = await sql<{ id: number }>`
    update webhook_recoveries set claimed_by = ${worker}, claimed_until = ${new Date(now.getTime() + leaseMs).toISOString()}
    where id in (${chosen}) and status = 'running' and (claimed_until is null or claimed_until < ${at})
    returning id`.execute(db);
  return rows.map((row) => Number(row.id));
}
