// Storage that turns read-only under the service: the SQLite file on an ext4 file system mounted with
// errors=remount-ro, which the kernel makes read-only while the service holds the file open, as it does when the
// disk behind it fails (forced here through ext4's own test hook, /sys/fs/ext4/<device>/trigger_fs_error; a plain
// `mount -o remount,ro` refuses while a file is open for writing). Writes are 503 with Retry-After, reads go on,
// /readyz says not-ready within a second, the process neither crashes nor hangs, and every acknowledged record is
// in the file, which passes SQLite's integrity check once the operator has run fsck (such a file system comes back
// only through an unmount: recovery is the operator's, then a start). Started on a read-only file system, the
// service refuses with a sentence naming the folder. Needs root and a loop device (CI runs as root); where either
// is missing, the test says so and skips.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sqliteDriver } from '../../server/db/sqlite-driver.js';
import { runToExit, SERVICE, stopAll } from '../service/process.js';
import { form, needs, type Service, send, startService } from './support.js';

const STORAGE_FAULTS = ['/problems/storage-read-only', '/problems/storage-error'];

let root: string;
let image: string;
let mountPoint: string;
let trigger: string | undefined;
let mounted = false;
let service: Service;

const run = (command: string, args: string[]) => execFileSync(command, args, { stdio: 'pipe' });

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'dss-read-only-'));
  image = join(root, 'ext4.img');
  mountPoint = join(root, 'mnt');
  mkdirSync(mountPoint);
  try {
    run('truncate', ['-s', '64M', image]);
    run('mkfs.ext4', ['-q', '-F', image]);
    run('mount', ['-o', 'loop,errors=remount-ro', image, mountPoint]);
    mounted = true;
  } catch (error) {
    console.warn(`read-only test skipped: cannot mount an ext4 image (needs root and a loop device): ${error}`);
    return;
  }
  const device = basename(execFileSync('findmnt', ['-n', '-o', 'SOURCE', mountPoint], { encoding: 'utf8' }).trim());
  const hook = `/sys/fs/ext4/${device}/trigger_fs_error`;
  if (existsSync(hook)) trigger = hook;
  else console.warn(`read-only test skipped: this kernel has no ${hook}`);
  service = await startService({ DATABASE_URL: `sqlite:${join(mountPoint, 'db.sqlite')}` });
}, 150_000);

afterAll(async () => {
  await stopAll();
  if (mounted) run('umount', [mountPoint]);
  rmSync(root, { recursive: true, force: true });
});

const auth = () => ({ Authorization: `Bearer ${service.key}` });
const create = (name: string) =>
  send(`${service.origin}/api/v1/spaces`, { method: 'POST', headers: form(service.key), body: `name=${name}` });

describe('storage turned read-only under the service', { timeout: 120_000 }, () => {
  it('is 503 for writes and not-ready, reads go on, and nothing acknowledged is lost', async (context) => {
    needs(context, trigger, "an ext4 image on a loop device and the kernel's trigger_fs_error hook");
    const acknowledged: number[] = [];
    for (let i = 0; i < 5; i++) {
      const created = await create(`before-${i}`);
      expect(created.status).toBe(201);
      acknowledged.push((created.body as { data: { id: number } }).data.id);
    }

    writeFileSync(trigger as string, 'domain-space-service read-only test');

    for (let i = 0; i < 5; i++) {
      const refused = await create(`after-${i}`);
      expect(refused.status).toBe(503);
      expect(STORAGE_FAULTS).toContain(refused.type);
      expect(refused.retryAfter).toMatch(/^\d+$/);
    }
    const removed = await send(`${service.origin}/api/v1/spaces/${acknowledged[0]}`, {
      method: 'DELETE',
      headers: auth(),
    });
    expect(removed.status).toBe(503);

    const ready = await send(`${service.origin}/readyz`);
    expect(ready.status).toBe(503);
    expect(STORAGE_FAULTS).toContain(ready.type);
    expect(ready.ms).toBeLessThan(1_000);
    expect((await send(`${service.origin}/healthz`)).status).toBe(200);
    const listed = await send(`${service.origin}/api/v1/spaces?per_page=100`, { headers: auth() });
    expect(listed.status).toBe(200);
    const ids = (listed.body as { data: { id: number }[] }).data.map((space) => space.id);
    expect(acknowledged.filter((id) => !ids.includes(id))).toEqual([]);
    expect(service.server.child.exitCode).toBeNull();

    // The operator's part: stop, unmount, fsck, mount again. Then the file holds every acknowledged record.
    expect((await service.server.stop('SIGTERM', 30_000)).code).toBe(0);
    run('umount', [mountPoint]);
    mounted = false;
    try {
      run('fsck.ext4', ['-f', '-y', image]);
    } catch (error) {
      // Exit code 1: errors were found and corrected, which is what a forced error leaves behind.
      expect((error as { status?: number }).status).toBe(1);
    }
    run('mount', ['-o', 'loop', image, mountPoint]);
    mounted = true;
    const db = new (sqliteDriver())(join(mountPoint, 'db.sqlite'));
    try {
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      const kept = (db.prepare('select id from spaces').all() as { id: number }[]).map((row) => row.id);
      expect(acknowledged.filter((id) => !kept.includes(id))).toEqual([]);
    } finally {
      db.close();
    }
  });

  it('refuses to start on a read-only file system, naming the folder', async (context) => {
    needs(context, mounted, 'an ext4 image on a loop device (root)');
    const readOnly = join(root, 'read-only');
    mkdirSync(readOnly);
    run('mount', ['-t', 'tmpfs', '-o', 'ro,size=1m', 'tmpfs', readOnly]);
    try {
      const exit = await runToExit(SERVICE, [], { PORT: '0', DATABASE_URL: `sqlite:${join(readOnly, 'db.sqlite')}` });
      expect(exit.code).toBe(1);
      expect(exit.stderr).toContain(`Its folder ${readOnly} is on a read-only file system`);
      expect(exit.stdout).toBe('');
    } finally {
      run('umount', [readOnly]);
    }
  });
});
