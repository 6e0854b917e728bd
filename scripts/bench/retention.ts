// `npm run bench:retention`: how fast retention deletes what is past it, on a fresh SQLite file (ENGINE=postgres:
// a fresh PostgreSQL database on DSS_TEST_POSTGRES_URL). Seeds EVENTS (100,000) events past retention, each with
// a finished delivery and its attempt (and as many Idempotency-Keys), twice: prunes one the previous release's way
// (one statement of 1,000 events, cascading to their deliveries and attempts, which that release ran once per 10
// minutes) and the other with the retention functions (pruneDeliveries, then pruneEvents, then
// pruneIdempotencyKeys, BATCH (1,000) rows a batch until a batch comes back short). Prints rows a second and the
// longest batch (each is one short transaction).
import { issueKey } from '../../server/accounts/keys.js';
import { type Database, openDatabase } from '../../server/db/database.js';
import { migrateToLatest } from '../../server/db/migrations.js';
import { pruneEvents } from '../../server/events/repository.js';
import { pruneIdempotencyKeys } from '../../server/idempotency/repository.js';
import { pruneDeliveries } from '../../server/webhooks/repository.js';
import { freshDatabase } from '../../test/support/database.js';
import { seedPastRetention } from './seed-past-retention.js';

const EVENTS = Number(process.env.EVENTS ?? 100_000);
const BATCH = Number(process.env.BATCH ?? 1000);
const DAY = 86_400_000;

async function seed(db: Database): Promise<void> {
  await migrateToLatest(db);
  const { account } = await issueKey(db, 'retention');
  await seedPastRetention(db, account.id, {
    events: EVENTS,
    payload: JSON.stringify({ data: 'x'.repeat(400) }),
    idempotencyKeys: true,
  });
}

/** Runs `batch` until it returns less than BATCH; rows, seconds, and the longest batch in ms. */
async function drain(batch: () => Promise<number>) {
  let rows = 0;
  let longest = 0;
  const started = performance.now();
  for (;;) {
    const at = performance.now();
    const deleted = await batch();
    longest = Math.max(longest, performance.now() - at);
    rows += deleted;
    if (deleted < BATCH) break;
  }
  const seconds = (performance.now() - started) / 1000;
  return {
    rows,
    seconds: +seconds.toFixed(2),
    per_second: Math.round(rows / seconds),
    longest_batch_ms: +longest.toFixed(1),
  };
}

async function main(): Promise<void> {
  const engine = process.env.ENGINE === 'postgres' ? 'postgres' : 'sqlite';
  const before = new Date(Date.now() - 30 * DAY);
  const seeded = async () => {
    const database = await freshDatabase(engine);
    const db = openDatabase(database.url);
    const started = performance.now();
    await seed(db);
    return { database, db, seedSeconds: (performance.now() - started) / 1000 };
  };

  const previousRun = await seeded();
  let previous: Awaited<ReturnType<typeof drain>>;
  try {
    const db = previousRun.db;
    // The previous release's prune: 1,000 events by id, their deliveries and attempts cascading.
    previous = await drain(async () => {
      const ids = db
        .selectFrom('events')
        .select('id')
        .where('created_at', '<', before.toISOString())
        .orderBy('id')
        .limit(BATCH);
      const result = await db.deleteFrom('events').where('id', 'in', ids).executeTakeFirst();
      return Number(result.numDeletedRows);
    });
  } finally {
    await previousRun.db.destroy();
    await previousRun.database.drop();
  }

  const run = await seeded();
  try {
    const { db } = run;
    const deliveries = await drain(() => pruneDeliveries(db, { before, batchSize: BATCH }));
    const events = await drain(() => pruneEvents(db, { before, batchSize: BATCH }));
    const keys = await drain(() => pruneIdempotencyKeys(db, { before, batchSize: BATCH }));
    const seconds = deliveries.seconds + events.seconds;
    console.log(
      JSON.stringify(
        {
          engine,
          events: EVENTS,
          batch: BATCH,
          seed_s: +run.seedSeconds.toFixed(1),
          previous_release: {
            events_with_cascade: previous,
            // It ran one batch per 10 minutes per process.
            scheduled_events_per_second: +(BATCH / 600).toFixed(2),
          },
          batches: { deliveries, events, idempotency_keys: keys },
          events_with_their_delivery_log_per_second: Math.round(EVENTS / seconds),
        },
        null,
        2,
      ),
    );
  } finally {
    await run.db.destroy();
    await run.database.drop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
