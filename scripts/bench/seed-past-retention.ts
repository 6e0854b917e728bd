// Rows past retention, seeded straight into a database for the benchmarks that time their pruning: one webhook
// endpoint of `accountId`, and `events` events 40 days old, each with a succeeded delivery and its one attempt
// (and, when asked, as many Idempotency-Keys), 500 to a transaction.
import type { Database } from '../../server/db/database.js';

const DAY = 86_400_000;

export async function seedPastRetention(
  db: Database,
  accountId: number,
  { events, payload, idempotencyKeys = false }: { events: number; payload: string; idempotencyKeys?: boolean },
): Promise<void> {
  const old = new Date(Date.now() - 40 * DAY).toISOString();
  const endpoint = await db
    .insertInto('webhook_endpoints')
    .values({
      account_id: accountId,
      url: 'https://receiver.example/hook',
      enabled_events: '["*"]',
      status: 'enabled',
      secret: 'whsec_bench',
      created_at: old,
      updated_at: old,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  for (let start = 0; start < events; start += 500) {
    const count = Math.min(500, events - start);
    await db.transaction().execute(async (trx) => {
      const made = await trx
        .insertInto('events')
        .values(
          Array.from({ length: count }, (_, i) => ({
            public_id: `evt_${(start + i).toString(16).padStart(24, '0')}`,
            account_id: accountId,
            type: 'space.created' as const,
            created_at: old,
            payload,
          })),
        )
        .returning('id')
        .execute();
      const deliveries = await trx
        .insertInto('webhook_deliveries')
        .values(
          made.map((event) => ({
            endpoint_id: Number(endpoint.id),
            event_id: Number(event.id),
            state: 'succeeded' as const,
            attempts: 1,
            next_attempt_at: old,
            created_at: old,
          })),
        )
        .returning('id')
        .execute();
      await trx
        .insertInto('webhook_attempts')
        .values(
          deliveries.map((delivery) => ({
            delivery_id: Number(delivery.id),
            endpoint_id: Number(endpoint.id),
            attempt: 1,
            attempted_at: old,
            status: 'succeeded' as const,
            response_status: 200,
            latency_ms: 12,
          })),
        )
        .execute();
      if (!idempotencyKeys) return;
      await trx
        .insertInto('idempotency_keys')
        .values(
          Array.from({ length: count }, (_, i) => ({
            account_id: accountId,
            key: `key-${start + i}`,
            fingerprint: 'f',
            status: 201,
            headers: '{}',
            body: payload,
            created_at: old,
          })),
        )
        .execute();
    });
  }
}
