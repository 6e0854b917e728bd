// The image's install, done here without a container runtime: the Dockerfile's build stage (its COPY and RUN
// lines: `npm ci --omit=dev`, whose prepare step bundles the server) in a clean copy, then the final stage's
// CMD with its ENV, run as a user who may write only to the data folder (the image's VOLUME). Healthy by the
// image's own HEALTHCHECK, a key created by the keys command, a record stored and read, nothing written outside
// the data folder, a clean stop; then the same install on PostgreSQL (as compose.yaml runs it), from an
// application folder that nobody may write, with its first key in the data folder, and with FIRST_KEY_FILE
// unset (its default is then in the read-only application: the start goes on and says how to make a key).
// (The docs stage, Scalar building the /docs page, is left out: test/docs covers that build.) Heavy (npm ci
// compiles the SQLite driver for Node 20): one CI leg only.
import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, delimiter, join, relative } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../scripts/bench/children.js';
import { KEY_PATTERN, ROOT } from '../service/process.js';
import { freshPostgresDatabase, type TestDatabase } from '../support/database.js';
import { argsOf, copySources, envOf, execForm, readDockerfile, shellCommand } from './dockerfile.js';

const stages = readDockerfile(ROOT);
const build = stages.find((stage) => stage.name === 'build');
const final = stages.at(-1);
const run = promisify(execFile);
const USER = { uid: Number(execFileSync('id', ['-u', 'nobody'], { encoding: 'utf8' })), gid: 65534 };

let work: string;
let app: string;
let data: string;
let service: ChildProcess | undefined;
let output = '';
const databases: TestDatabase[] = [];

/** PATH without any node_modules/.bin (npm test puts this repository's there; a container has none). */
const PATH = (process.env.PATH ?? '')
  .split(delimiter)
  .filter((entry) => !entry.includes('node_modules'))
  .join(delimiter);

/** The locale variables that are set (LANG, LC_ALL, LC_CTYPE, …). */
const locale = Object.fromEntries(
  Object.entries(process.env).filter(
    (entry): entry is [string, string] => /^(LANG|LC_\w+)$/.test(entry[0]) && entry[1] !== undefined,
  ),
);

/** Every file of the application with its modification time, to show that nothing was written there. */
function snapshot(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name))
    .map((file) => `${relative(dir, file)} ${statSync(file).mtimeMs}`)
    .sort();
}

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'dss-production-'));
  chmodSync(work, 0o755);
  app = join(work, 'app');
  data = join(work, 'data');
  mkdirSync(app);
});

afterAll(async () => {
  if (service && service.exitCode === null && service.signalCode === null) {
    service.kill('SIGKILL');
    await new Promise((resolve) => service?.once('close', resolve));
  }
  if (work) rmSync(work, { recursive: true, force: true });
  await Promise.all(databases.map((database) => database.drop()));
});

function runAs(command: string[], env: Record<string, string>, timeout = 30_000): string {
  return execFileSync(command[0] as string, command.slice(1), { cwd: app, env, ...USER, encoding: 'utf8', timeout });
}

const finalStage = () => final ?? { instructions: [] };

/** A new data folder that only the service's user may write, as the image's VOLUME is. */
function dataFolder(name: string): string {
  const folder = join(work, name);
  mkdirSync(folder);
  chownSync(folder, USER.uid, USER.gid);
  return folder;
}

/** The final stage's ENV with its VOLUME at `folder`; loopback only, and a short drain for the stop. */
async function imageEnv(folder: string): Promise<Record<string, string>> {
  const [volume] = execForm(argsOf(finalStage(), 'VOLUME')[0] ?? '[]');
  const env = Object.fromEntries(
    Object.entries(envOf(finalStage())).map(([name, value]) => [name, value.replace(volume as string, folder)]),
  );
  return { PATH, ...env, HOST: '127.0.0.1', PORT: String(await freePort()), DRAIN_DELAY_S: '1' };
}

/** The final stage's CMD as the service's user; resolves once healthy by the image's HEALTHCHECK command. */
async function startService(env: Record<string, string>): Promise<{ exited: Promise<number | null> }> {
  output = '';
  const [command, ...args] = execForm(argsOf(finalStage(), 'CMD')[0] ?? '');
  const child = spawn(command as string, args, { cwd: app, env, ...USER, stdio: ['ignore', 'pipe', 'pipe'] });
  service = child;
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
  // Bounded: a start on a busy machine takes seconds.
  const healthcheck = execForm(argsOf(finalStage(), 'HEALTHCHECK')[0] ?? '');
  const healthy = async () => {
    for (const deadline = Date.now() + 90_000; Date.now() < deadline; ) {
      try {
        runAs(healthcheck, env, 10_000);
        return true;
      } catch {
        if (child.exitCode !== null) return false;
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    }
    return false;
  };
  expect(await healthy(), output).toBe(true);
  // Wrapped: an async function returning the promise itself would wait for the exit.
  return { exited };
}

/** A space stored and read back with `key`. */
async function storeAndRead(port: string, key: string): Promise<void> {
  const api = `http://127.0.0.1:${port}/api/v1`;
  const headers = { Authorization: `Bearer ${key}` };
  const stored = await fetch(`${api}/spaces`, {
    method: 'POST',
    headers: { ...headers, 'Content-Type': 'application/x-www-form-urlencoded' },
    body: 'name=Operations&color=4',
  });
  expect(stored.status).toBe(201);
  const { data: space } = await stored.json();
  const read = await fetch(`${api}/spaces/${space.id}`, { headers });
  expect(read.status).toBe(200);
  expect((await read.json()).data).toMatchObject({ id: space.id, name: 'Operations', color: 4 });
}

describe('the production install, as the Dockerfile makes it', { timeout: 1_200_000 }, () => {
  it('has a build stage, a non-root user, a data volume, a health check and node as the command', () => {
    expect(build).toBeDefined();
    expect(argsOf(build ?? { instructions: [] }, 'RUN').map(shellCommand)).toContainEqual(
      expect.stringMatching(/^npm ci --omit=dev\b/),
    );
    const last = final ?? { instructions: [] };
    expect(argsOf(last, 'USER')).toEqual(['node']);
    expect(argsOf(last, 'VOLUME').map(execForm)).toEqual([['/data']]);
    expect(execForm(argsOf(last, 'CMD')[0] ?? '')[0]).toBe('node');
    expect(argsOf(last, 'HEALTHCHECK')).toHaveLength(1);
  });

  it('installs runtime dependencies only, then serves as a user who can write to the data folder alone', async () => {
    // The build stage, line by line (WORKDIR /app is `app`).
    for (const { op, args } of build?.instructions ?? []) {
      if (op === 'COPY') {
        const { sources = [], destination = '.' } = copySources(args) ?? {};
        const intoFolder = sources.length > 1 || destination.endsWith('/');
        for (const source of sources) {
          cpSync(join(ROOT, source), join(app, destination, intoFolder ? basename(source) : ''), { recursive: true });
        }
      } else if (op === 'RUN') {
        // Bounded generously: npm ci compiles the SQLite driver for Node 20 (minutes on a busy machine). The locale
        // goes along: ccache (CI puts it on PATH) keys its objects by LANG and LC_*, so without them this compile
        // would never reuse the objects of the checkout's own npm ci.
        await run('sh', ['-ec', shellCommand(args)], {
          cwd: app,
          env: {
            PATH,
            HOME: process.env.HOME ?? '/root',
            npm_config_audit: 'false',
            npm_config_fund: 'false',
            ...locale,
          },
          timeout: 900_000,
        });
      }
    }
    // No package the lockfile marks as needed only for development (the top-level devDependencies and
    // everything only they need) was installed: the service runs below without any of them.
    const lock = JSON.parse(readFileSync(join(app, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { dev?: boolean }>;
    };
    const devOnly = Object.entries(lock.packages).filter(([path, entry]) => path && entry.dev);
    expect(devOnly.length).toBeGreaterThan(100);
    expect(devOnly.map(([path]) => path).filter((path) => existsSync(join(app, path)))).toEqual([]);
    expect(existsSync(join(app, '.build', 'server.mjs'))).toBe(true);

    // The final stage: the data folder is the image's VOLUME, the only place its user owns.
    data = dataFolder('data');
    const env = await imageEnv(data);
    const before = snapshot(app);
    const { exited } = await startService(env);
    await expect.poll(() => existsSync(join(data, 'first-api-key')), { timeout: 10_000 }).toBe(true);
    expect(statSync(join(data, 'first-api-key')).mode & 0o777).toBe(0o600);

    // A key, as an operator creates one in the container (`docker exec … node scripts/keys.mjs create`).
    const created = runAs(['node', 'scripts/keys.mjs', 'create', '--account', 'ops', '--label', 'install test'], env);
    const key = created.match(KEY_PATTERN)?.[0] as string;
    expect(key).toBeDefined();
    await storeAndRead(env.PORT as string, key);
    expect((await fetch(`http://127.0.0.1:${env.PORT}/readyz`)).status).toBe(200);
    // No docs page here (the image copies it from its docs stage): the 503 says how to get one without npm run docs.
    const docs = await fetch(`http://127.0.0.1:${env.PORT}/docs`);
    expect(docs.status).toBe(503);
    expect((await docs.json()).detail).toContain('npm ci --omit=dev');

    service?.kill('SIGTERM');
    expect(await exited, output).toBe(0);
    expect(snapshot(app)).toEqual(before);
    expect(readdirSync(data)).toEqual(expect.arrayContaining(['domain-space.sqlite', 'first-api-key']));
  });

  it('serves on PostgreSQL as that user from an application nobody may write, its first key in the data folder', async () => {
    expect(existsSync(join(app, '.build', 'server.mjs'))).toBe(true);
    // Read-only for everyone (the service's user could not write it anyway: it is root's).
    execFileSync('chmod', ['-R', 'a-w', app]);
    const before = snapshot(app);
    const database = await freshPostgresDatabase();
    databases.push(database);
    const folder = dataFolder('data-postgres');
    const env: Record<string, string> = { ...(await imageEnv(folder)), DATABASE_URL: database.url };
    const { exited } = await startService(env);
    const keyFile = join(folder, 'first-api-key');
    await expect.poll(() => existsSync(keyFile), { timeout: 10_000 }).toBe(true);
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    expect(statSync(keyFile).uid).toBe(USER.uid);
    await storeAndRead(env.PORT as string, readFileSync(keyFile, 'utf8').trim());
    service?.kill('SIGTERM');
    expect(await exited, output).toBe(0);
    expect(readdirSync(folder)).toEqual(['first-api-key']);
    expect(snapshot(app)).toEqual(before);
  });

  it('serves on PostgreSQL with FIRST_KEY_FILE unset, saying how to make a key, and the keys command makes one', async () => {
    const before = snapshot(app);
    const database = await freshPostgresDatabase();
    databases.push(database);
    const { FIRST_KEY_FILE: _default, ...env } = await imageEnv(dataFolder('data-default'));
    const { exited } = await startService({ ...env, DATABASE_URL: database.url });
    // The banner follows the first healthy answer by a moment (it is printed once the first key is settled).
    await expect
      .poll(() => output, { timeout: 30_000 })
      .toContain("No API key exists, and none was created: the first key's file");
    expect(output).toContain('FIRST_KEY_FILE');
    expect(output).toMatch(/"level":"warn".*first one was not created/);
    expect(output).not.toMatch(KEY_PATTERN);
    const created = runAs(['node', 'scripts/keys.mjs', 'create', '--account', 'ops'], {
      ...env,
      DATABASE_URL: database.url,
    });
    await storeAndRead(env.PORT as string, created.match(KEY_PATTERN)?.[0] as string);
    service?.kill('SIGTERM');
    expect(await exited, output).toBe(0);
    expect(snapshot(app)).toEqual(before);
  });
});
