// The benchmark's peers (scripts/bench/) answer with the service's SQL shaped into the service's bodies; `npm run
// bench` compares them to the service before it prints a figure. Held here without the benchmark: a space the
// peers store, show and update is the record the service's own repository reads for the same row, field for
// field, so a field added to the spec and the table that the peers do not answer fails here, naming it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sameAnswers } from '../../scripts/bench/same-answers.js';
import { issueKey } from '../../server/accounts/keys.js';
import { type Database, openDatabase } from '../../server/db/database.js';
import { migrateToLatest } from '../../server/db/migrations.js';
import { eventLog } from '../../server/events/outbox.js';
import { eventRepository } from '../../server/events/repository.js';
import { spaceRepository } from '../../server/spaces/repository.js';
import { webhookFanOut } from '../../server/webhooks/fan-out.js';
import { DEFAULT_WEBHOOK_SETTINGS } from '../../server/webhooks/settings.js';

const dir = mkdtempSync(join(tmpdir(), 'dss-bench-peers-'));
const file = join(dir, 'peers.sqlite');
let db: Database;
let accountId: number;
let peers: ReturnType<typeof sameAnswers>;

beforeAll(async () => {
  db = openDatabase(`sqlite:${file}`);
  await migrateToLatest(db);
  accountId = (await issueKey(db, 'peers')).account.id;
  peers = sameAnswers(file);
});
afterAll(async () => {
  await db?.destroy();
  rmSync(dir, { recursive: true, force: true });
});

/** The space as the service's repository reads it. */
async function servicesRecord(id: number) {
  const found = await spaceRepository(db, eventLog('space', webhookFanOut(DEFAULT_WEBHOOK_SETTINGS))).find(
    accountId,
    id,
  );
  return found?.record;
}

describe("the benchmark peers' answers (scripts/bench/same-answers.ts)", () => {
  it('store, show and update a space as the service reads it, field for field', async () => {
    const stored = peers.store(accountId, { name: ' Peer space ', color: 4 }).body as { data: { id: number } };
    const id = stored.data.id;
    expect(stored.data).toEqual(await servicesRecord(id));
    expect((peers.show(accountId, id).body as { data: unknown }).data).toEqual(await servicesRecord(id));
    const updated = peers.update(accountId, id, { color: 6 }).body as { data: unknown };
    expect(updated).toEqual({ data: await servicesRecord(id) });
  });

  it('delete a space as the service does, and list the events the service logs, newest first', async () => {
    const stored = peers.store(accountId, { name: 'Peer to delete', color: 2 }).body as { data: { id: number } };
    const id = stored.data.id;
    expect(peers.delete(accountId, id).status).toBe(204);
    expect(await servicesRecord(id)).toBeUndefined();
    expect(peers.delete(accountId, id).status).toBe(404);
    const listed = (await peers.events(accountId, { per_page: 10 }, {})).body as { data: Array<{ type: string }> };
    const logged = await eventRepository(db).list(accountId, { limit: 10 });
    expect(listed.data).toEqual(logged.map((row) => JSON.parse(row.payload)));
    expect(listed.data[0]).toMatchObject({ type: 'space.deleted', data: { object: { id } } });
  });
});
