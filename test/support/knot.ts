// A real authoritative DNS server for the tests: Knot (knotd from Debian's package, installed when missing) on
// 127.0.0.1 and a free port, serving the zone `verify.example` that the tests change through knotc, and a zone
// that fails to load (`broken.example`, answered SERVFAIL). Names outside both are answered REFUSED.
import { execFileSync, spawn } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { aptInstall } from './debian.js';

export const ZONE = 'verify.example';
export const BROKEN_ZONE = 'broken.example';

export interface KnotServer {
  /** `127.0.0.1:<port>`, for DNS_SERVERS. */
  address: string;
  /** Replaces the TXT records at `owner` (a name under ZONE) with these; each record is a list of strings. */
  setTxt(owner: string, records: string[][]): Promise<void>;
  /** Removes every record at `owner`. */
  remove(owner: string): Promise<void>;
  /** Sends one dynamic update of these knsupdate lines (`update add …`, `update delete …`) to the zone. */
  update(lines: string[]): Promise<void>;
  stop(): Promise<void>;
}

/** Installs Knot from Debian's packages when knotd or knsupdate is missing (as CI's fresh machine may be). */
export function ensureKnot(): void {
  if (existsSync('/usr/sbin/knotd') && existsSync('/usr/sbin/knotc') && existsSync('/usr/bin/knsupdate')) return;
  aptInstall(['knot', 'knot-dnsutils']);
}

/** Runs knsupdate with `script` on stdin; rejects with its output when it fails. */
function knsupdate(script: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('/usr/bin/knsupdate', [], { stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.once('error', reject);
    child.once('close', (code) => (code === 0 ? resolve() : reject(new Error(`knsupdate failed: ${output}`))));
    child.stdin.end(script);
  });
}

/** A port free on 127.0.0.1 for both TCP and UDP (Knot answers on both). */
async function freePort(): Promise<number> {
  for (;;) {
    const port = await new Promise<number>((resolve, reject) => {
      const server = createServer().listen(0, '127.0.0.1', () => {
        const { port: taken } = server.address() as { port: number };
        server.close(() => resolve(taken));
      });
      server.once('error', reject);
    });
    const udpFree = await new Promise<boolean>((resolve) => {
      const socket = createSocket('udp4');
      socket.once('error', () => resolve(false));
      socket.bind(port, '127.0.0.1', () => socket.close(() => resolve(true)));
    });
    if (udpFree) return port;
  }
}

const relative = (owner: string) => {
  if (!owner.endsWith(`.${ZONE}`)) throw new Error(`${owner} is not in ${ZONE}`);
  return owner.slice(0, -(ZONE.length + 1));
};
const quoted = (strings: string[]) => strings.map((s) => `"${s.replace(/["\\]/g, '\\$&')}"`).join(' ');

export async function startKnot(): Promise<KnotServer> {
  ensureKnot();
  const dir = mkdtempSync(join(tmpdir(), 'dss-knot-'));
  const port = await freePort();
  const socket = join(dir, 'knot.sock');
  writeFileSync(
    join(dir, 'knot.conf'),
    `server:
    rundir: "${dir}"
    listen: 127.0.0.1@${port}
database:
    storage: "${dir}"
control:
    listen: "${socket}"
log:
  - target: stderr
    any: error
acl:
  - id: tests
    address: 127.0.0.1
    action: update
zone:
  - domain: ${ZONE}
    storage: "${dir}"
    file: "${ZONE}.zone"
    acl: tests
  - domain: ${BROKEN_ZONE}
    storage: "${dir}"
    file: "${BROKEN_ZONE}.zone"
`,
  );
  writeFileSync(
    join(dir, `${ZONE}.zone`),
    `$TTL 60\n@ SOA ns.${ZONE}. admin.${ZONE}. 1 3600 600 86400 60\n@ NS ns.${ZONE}.\nns A 127.0.0.1\n`,
  );
  writeFileSync(join(dir, `${BROKEN_ZONE}.zone`), 'not a zone file\n');
  const knotd = spawn('/usr/sbin/knotd', ['-c', join(dir, 'knot.conf')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let errors = '';
  knotd.stderr.on('data', (chunk: Buffer) => {
    errors += chunk.toString();
  });
  const knotc = (...args: string[]) =>
    execFileSync('/usr/sbin/knotc', ['-s', socket, ...args], { stdio: 'pipe', timeout: 10_000 }).toString();
  // Ready once the control socket answers and the zone is loaded.
  for (let attempt = 0; ; attempt++) {
    try {
      if (knotc('zone-status', ZONE).includes('serial')) break;
    } catch {
      if (knotd.exitCode !== null) throw new Error(`knotd exited: ${errors}`);
    }
    if (attempt > 200) throw new Error(`knotd did not start: ${errors}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  // Changes go through dynamic updates (knsupdate reads them on stdin), one at a time, without blocking the
  // event loop (the app under test answers meanwhile).
  let queue: Promise<unknown> = Promise.resolve();
  const update = (lines: string[]) => {
    const script = [`server 127.0.0.1 ${port}`, `zone ${ZONE}.`, ...lines, 'send', ''].join('\n');
    const run = queue.then(() => knsupdate(script));
    queue = run.catch(() => undefined);
    return run;
  };

  return {
    address: `127.0.0.1:${port}`,
    async setTxt(owner, records) {
      relative(owner);
      const adds = records.map((record) => `update add ${owner}. 60 TXT ${quoted(record)}`);
      await update([`update delete ${owner}. TXT`, ...adds]);
    },
    update,
    async remove(owner) {
      relative(owner);
      await update([`update delete ${owner}.`]);
    },
    async stop() {
      if (knotd.exitCode === null) {
        const exited = new Promise((resolve) => knotd.once('exit', resolve));
        knotd.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A DNS "server" that never answers: a UDP socket that reads queries and drops them. */
export async function silentServer(): Promise<{ address: string; close(): Promise<void> }> {
  const socket = createSocket('udp4');
  socket.on('message', () => undefined);
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${socket.address().port}`,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}
