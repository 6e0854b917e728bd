// Before `npm test` (and `npm run test:postgres`) runs a suite: what the leg needs from this machine and lacks,
// one line each with how to get it, and exit 1 then, so that nobody waits minutes for a bare ECONNREFUSED. Each
// probe is bounded (2 s). Programs the suites install themselves as root from Debian's packages (HAProxy, Knot)
// are only noted. DSS_TEST_PREFLIGHT=warn prints the same and lets the suites run anyway.
// Usage: tsx test/preflight.ts [sqlite|postgres|node24] (default: the leg from the environment, test/legs.ts).
import { accessSync, constants, existsSync } from 'node:fs';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import pg from 'pg';
import { currentLeg, type Leg } from './legs.js';
import { ADMIN_URL } from './support/database.js';
import { inHistory, previousRelease, type Release } from './support/previous-release.js';

const TIMEOUT_MS = 2_000;
const REDIS_URL = process.env.DSS_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const root = process.getuid?.() === 0;
const apt = existsSync('/usr/bin/apt-get');

interface Need {
  legs: Exclude<Leg, 'quick'>[];
  /** Undefined when present; else why not and how to get it. */
  lacking(): Promise<string | undefined> | string | undefined;
  /** Missing, but the suites install it themselves (as root, from Debian's packages). */
  installs?: () => boolean;
}

const where = (url: string) => {
  const { hostname, port } = new URL(url);
  return `${hostname}:${port}`;
};

const NEEDS: Record<string, Need> = {
  postgres: {
    legs: ['sqlite', 'postgres'],
    async lacking() {
      const name = `PostgreSQL at ${where(ADMIN_URL)}${process.env.DSS_TEST_POSTGRES_URL ? ' (DSS_TEST_POSTGRES_URL)' : ''}`;
      const client = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: TIMEOUT_MS });
      client.on('error', () => {});
      try {
        await client.connect();
        const { rows } = await client.query(
          "select rolcreatedb or rolsuper as creates, exists (select 1 from pg_available_extensions where name = 'pg_trgm') as trgm from pg_roles where rolname = current_user",
        );
        if (!rows[0]?.creates)
          return `${name}: its user may not create databases (the suites make one each): ALTER ROLE … CREATEDB`;
        if (!rows[0]?.trgm) return `${name}: lacks the pg_trgm extension: apt-get install postgresql-contrib`;
        return undefined;
      } catch (error) {
        const reason = (error as { code?: string }).code ?? (error as Error).message;
        return (
          `${name}: ${reason}. Start it (Debian: apt-get install postgresql, then ` +
          'pg_ctlcluster <version> main start), or set DSS_TEST_POSTGRES_URL=postgres://user@host:port/postgres ' +
          '(a user that may create databases)'
        );
      } finally {
        await client.end().catch(() => {});
      }
    },
  },
  redis: {
    legs: ['sqlite'],
    async lacking() {
      const reason = await redisPing(REDIS_URL);
      if (reason === undefined) return undefined;
      return (
        `Redis at ${where(REDIS_URL)}${process.env.DSS_TEST_REDIS_URL ? ' (DSS_TEST_REDIS_URL)' : ''}: ${reason}. ` +
        'Start one (apt-get install redis-server; redis-server --daemonize yes), or set DSS_TEST_REDIS_URL'
      );
    },
  },
  'redis-server': {
    legs: ['sqlite'],
    lacking: () =>
      onPath('redis-server')
        ? undefined
        : 'redis-server (the program: the deploy suites start Redis servers of their own): apt-get install redis-server',
  },
  chromium: {
    legs: ['sqlite'],
    lacking: () =>
      executable('/usr/bin/chromium')
        ? undefined
        : 'Chromium at /usr/bin/chromium (the docs page and the client in a browser): apt-get install chromium',
  },
  root: {
    legs: ['sqlite'],
    lacking: () =>
      root
        ? undefined
        : 'root (a tmpfs to fill for the disk-full test, files owned by another user, apt-get): run as root, as CI does (sudo -E npm test, or in a container)',
  },
  haproxy: {
    legs: ['sqlite'],
    lacking: () => (onPath('haproxy') ? undefined : "HAProxy (the deploy suites' balancer): apt-get install haproxy"),
    installs: () => root && apt,
  },
  knot: {
    legs: ['sqlite', 'postgres'],
    lacking: () =>
      ['/usr/sbin/knotd', '/usr/sbin/knotc', '/usr/bin/knsupdate'].every(executable)
        ? undefined
        : 'Knot DNS (knotd, knotc, knsupdate: the domain checks against a real DNS server): apt-get install knot knot-dnsutils',
    installs: () => root && apt,
  },
  prometheus: {
    legs: ['sqlite'],
    lacking: () =>
      ['/usr/bin/promtool', '/usr/bin/prometheus'].every(executable)
        ? undefined
        : "Prometheus (promtool and prometheus: the alert rules' tests and a real scrape of the service): apt-get install --no-install-recommends prometheus (its service need not run)",
  },
  'previous release': {
    legs: ['sqlite', 'postgres'],
    lacking() {
      let release: Release;
      try {
        release = previousRelease();
      } catch (error) {
        return (error as Error).message;
      }
      if (inHistory(release)) return undefined;
      return `the previous release's commit ${release.commit.slice(0, 7)} (.ci/previous-release) in git history (the upgrade tests install it): git fetch --unshallow, or clone without --depth`;
    },
  },
};

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

const onPath = (program: string) =>
  (process.env.PATH ?? '').split(':').some((dir) => dir && executable(join(dir, program)));

/** Undefined when Redis answers PING with PONG within the bound; else what happened. */
function redisPing(url: string): Promise<string | undefined> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = createConnection({ host: hostname, port: Number(port || 6379) });
    let answer = '';
    const done = (reason: string | undefined) => {
      socket.destroy();
      resolve(reason);
    };
    socket.setTimeout(TIMEOUT_MS, () => done(`no answer within ${TIMEOUT_MS} ms`));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      answer += chunk.toString();
      if (answer.includes('\r\n')) done(answer.startsWith('+PONG') ? undefined : `answered ${answer.trim()}`);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => done(error.code ?? error.message));
  });
}

const argument = process.argv[2];
const leg = argument === 'sqlite' || argument === 'postgres' || argument === 'node24' ? argument : currentLeg();
const needed = Object.entries(NEEDS).filter(([, need]) => need.legs.includes(leg));
const results = await Promise.all(needed.map(async ([name, need]) => ({ name, need, lacking: await need.lacking() })));
const missing = results.filter((r) => r.lacking !== undefined && !r.need.installs?.());
const installing = results.filter((r) => r.lacking !== undefined && r.need.installs?.());
const command = leg === 'postgres' ? 'npm run test:postgres' : 'npm test';

for (const { lacking } of installing) {
  console.error(`preflight: missing, the suites will install it (apt-get, as root): ${lacking}`);
}
if (missing.length === 0) {
  const names = needed.map(([name]) => name).join(', ');
  console.error(`preflight (${leg} leg): ${names ? `${names}: ready` : 'needs nothing from this machine'}`);
} else {
  console.error(`${command} needs, and this machine lacks (${missing.length}):`);
  for (const { lacking } of missing) console.error(`  MISSING ${lacking}`);
  if (process.env.DSS_TEST_PREFLIGHT === 'warn') {
    console.error('DSS_TEST_PREFLIGHT=warn: running the suites anyway; those that need the above will fail.');
  } else {
    console.error(
      'No suite was run. Provide the above, or run the suites that need none of it (npm run test:quick), or set ' +
        'DSS_TEST_PREFLIGHT=warn to run everything anyway.',
    );
    process.exit(1);
  }
}
