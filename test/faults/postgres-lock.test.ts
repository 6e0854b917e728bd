// A transaction elsewhere holds `lock table spaces in access exclusive mode` for longer than the statement
// timeout (a migration, an operator's session): requests that need spaces are 503 within the limits instead of
// hanging, /readyz answers within 1 s, and domains (another table) are still served. More requests than the pool
// has connections are sent at once, so the pool-wait limit is met too. Runs in the PostgreSQL leg of the suite.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stopAll } from '../service/process.js';
import { freshPostgresDatabase, type TestDatabase } from '../support/database.js';
import { form, type Service, send, startService } from './support.js';

const STATEMENT_TIMEOUT_S = 1;
const POOL_TIMEOUT_S = 1;

let database: TestDatabase;
let service: Service;

beforeAll(async () => {
  database = await freshPostgresDatabase();
  // The lock wait is allowed longer than a statement, so that the statement timeout is the limit met.
  service = await startService({
    DATABASE_URL: database.url,
    DATABASE_STATEMENT_TIMEOUT_S: String(STATEMENT_TIMEOUT_S),
    DATABASE_LOCK_TIMEOUT_S: '3',
    DATABASE_POOL_TIMEOUT_S: String(POOL_TIMEOUT_S),
  });
}, 150_000);

afterAll(async () => {
  await stopAll();
  await database?.drop();
});

const get = (path: string) =>
  send(`${service.origin}${path}`, { headers: { Authorization: `Bearer ${service.key}` }, timeoutMs: 20_000 });

describe('a lock on spaces held longer than the statement timeout', { timeout: 90_000 }, () => {
  it('is 503 within the limits for spaces, while /readyz answers within 1 s and domains are served', async () => {
    for (const name of ['a', 'b']) {
      const created = await send(`${service.origin}/api/v1/spaces`, {
        method: 'POST',
        headers: form(service.key),
        body: `name=${name}`,
      });
      expect(created.status).toBe(201);
    }
    const locker = new pg.Client({ connectionString: database.url });
    await locker.connect();
    try {
      await locker.query('begin');
      await locker.query('lock table spaces in access exclusive mode');
      // More than the pool's 10 connections at once: some wait for a connection, the rest for the lock.
      const spaces = Promise.all(Array.from({ length: 14 }, () => get('/api/v1/spaces')));
      const ready = await send(`${service.origin}/readyz`);
      const domains = await get('/api/v1/domains');
      const answers = await spaces;

      expect(ready.ms).toBeLessThan(1_000);
      expect([200, 503]).toContain(ready.status);
      for (const answer of answers) {
        expect(answer.status).toBe(503);
        expect(['/problems/database-timeout', '/problems/database-busy']).toContain(answer.type);
        expect(answer.retryAfter).toBe('1');
        // Within the statement timeout, after a wait for a connection of at most the pool timeout (plus a
        // generous margin for a loaded machine).
        expect(answer.ms).toBeLessThan((STATEMENT_TIMEOUT_S + POOL_TIMEOUT_S) * 1000 + 2_000);
      }
      expect(answers.some((answer) => answer.type === '/problems/database-timeout')).toBe(true);
      // Another table is served while the lock is held: at once, or once the spaces requests gave their
      // connections back.
      expect([200, 503]).toContain(domains.status);
      expect((await get('/api/v1/domains')).status).toBe(200);
    } finally {
      await locker.query('rollback').catch(() => {});
      await locker.end();
    }
    expect((await get('/api/v1/spaces')).status).toBe(200);
    expect((await send(`${service.origin}/readyz`)).status).toBe(200);
  });
});
