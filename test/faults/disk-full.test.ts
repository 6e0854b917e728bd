// The SQLite database on a 16 MB tmpfs that fills up: writes are 503 storage-full with Retry-After (not 500),
// reads go on, /readyz says not-ready while writes fail; freeing space heals it without a restart, nothing
// acknowledged is lost and SQLite's integrity check passes. Mounting needs root (CI runs as root); where it fails,
// the test says so and skips.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sqliteDriver } from '../../server/db/sqlite-driver.js';
import { stopAll } from '../service/process.js';
import { form, needs, type Service, send, startService } from './support.js';

let dir: string;
let mounted = false;
let service: Service;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'dss-disk-full-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=16m', 'tmpfs', dir], { stdio: 'pipe' });
    mounted = true;
  } catch (error) {
    console.warn(`disk-full test skipped: cannot mount a tmpfs (needs root): ${String(error).split('\n')[0]}`);
    return;
  }
  service = await startService({ DATABASE_URL: `sqlite:${join(dir, 'db.sqlite')}` });
}, 150_000);

afterAll(async () => {
  await stopAll();
  if (mounted) execFileSync('umount', [dir]);
  rmSync(dir, { recursive: true, force: true });
});

const create = (name: string) =>
  send(`${service.origin}/api/v1/spaces`, { method: 'POST', headers: form(service.key), body: `name=${name}` });

/** Fills the file system: dd stops at the first write that does not fit. */
function fill(file: string): void {
  try {
    execFileSync('dd', ['if=/dev/zero', `of=${file}`, 'bs=1M', 'count=64'], { stdio: 'ignore' });
  } catch {
    // "No space left on device" is the point.
  }
}

describe('a full disk', { timeout: 90_000 }, () => {
  it('is 503 storage-full for writes and not-ready, reads go on, and it heals once space is freed', async (context) => {
    needs(context, mounted, 'a tmpfs to fill (mounting one needs root)');
    const acknowledged: number[] = [];
    for (let i = 0; i < 10; i++) {
      const created = await create(`before-${i}`);
      expect(created.status).toBe(201);
      acknowledged.push((created.body as { data: { id: number } }).data.id);
    }
    const filler = join(dir, 'filler');
    fill(filler);

    // Long names: each write needs new pages, which no longer fit.
    const answers = [];
    for (let i = 0; i < 10; i++) answers.push(await create(`${'x'.repeat(250)}-${i}`));
    for (const answer of answers) {
      if (answer.status === 201) acknowledged.push((answer.body as { data: { id: number } }).data.id);
    }
    const refused = answers.filter((answer) => answer.status !== 201);
    expect(refused.length).toBeGreaterThan(0);
    for (const answer of refused) {
      expect(answer).toMatchObject({ status: 503, type: '/problems/storage-full', retryAfter: '10' });
    }
    const ready = await send(`${service.origin}/readyz`);
    expect(ready).toMatchObject({ status: 503, type: '/problems/storage-full' });
    expect(ready.ms).toBeLessThan(1_000);
    const read = await send(`${service.origin}/api/v1/spaces`, { headers: { Authorization: `Bearer ${service.key}` } });
    expect(read.status).toBe(200);
    // Still not ready a moment later: the probe writes too.
    expect((await send(`${service.origin}/readyz`)).status).toBe(503);

    rmSync(filler);
    await expect.poll(async () => (await send(`${service.origin}/readyz`)).status, { timeout: 10_000 }).toBe(200);
    const after = await create('after');
    expect(after.status).toBe(201);
    acknowledged.push((after.body as { data: { id: number } }).data.id);

    const kept = new Set<number>();
    for (let url = `/api/v1/spaces?per_page=100&after=`; url; ) {
      const page = (await send(`${service.origin}${url}`, { headers: { Authorization: `Bearer ${service.key}` } }))
        .body as { data: { id: number }[]; links: { next: string | null } };
      for (const space of page.data) kept.add(space.id);
      url = page.links.next ?? '';
    }
    expect(acknowledged.filter((id) => !kept.has(id))).toEqual([]);

    const db = new (sqliteDriver())(join(dir, 'db.sqlite'), { readonly: true });
    try {
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    } finally {
      db.close();
    }
  });
});
