// The image's install, done here without a container runtime: the Dockerfile's build stage (its COPY and RUN
// lines: `npm ci --omit=dev`, whose prepare step bundles the server) in a clean copy, then the final stage's
// CMD with its ENV, run as a user who may write only to the data folder (the image's VOLUME). Healthy by the
// image's own HEALTHCHECK, a key created by the keys command, a record stored and read, nothing written outside
// the data folder, a clean stop. (The docs stage, Scalar building the /docs page, is left out: test/docs
// covers that build.) Heavy (npm ci compiles the SQLite driver for Node 20): one CI leg only.
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

/** PATH without any node_modules/.bin (npm test puts this repository's there; a container has none). */
const PATH = (process.env.PATH ?? '')
  .split(delimiter)
  .filter((entry) => !entry.includes('node_modules'))
  .join(delimiter);

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
});

function runAs(command: string[], env: Record<string, string>, timeout = 30_000): string {
  return execFileSync(command[0] as string, command.slice(1), { cwd: app, env, ...USER, encoding: 'utf8', timeout });
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
        // Bounded generously: npm ci compiles the SQLite driver for Node 20 (minutes on a busy machine).
        await run('sh', ['-ec', shellCommand(args)], {
          cwd: app,
          env: { PATH, HOME: process.env.HOME ?? '/root', npm_config_audit: 'false', npm_config_fund: 'false' },
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
    const [volume] = execForm(argsOf(final ?? { instructions: [] }, 'VOLUME')[0] ?? '[]');
    mkdirSync(data);
    chownSync(data, USER.uid, USER.gid);
    const port = await freePort();
    const imageEnv = Object.fromEntries(
      Object.entries(envOf(final ?? { instructions: [] })).map(([name, value]) => [
        name,
        value.replace(volume as string, data),
      ]),
    );
    // Loopback only, and a short drain delay for the stop at the end.
    const env = { PATH, ...imageEnv, HOST: '127.0.0.1', PORT: String(port), DRAIN_DELAY_S: '1' };
    const before = snapshot(app);
    const [command, ...args] = execForm(argsOf(final ?? { instructions: [] }, 'CMD')[0] ?? '');
    service = spawn(command as string, args, { cwd: app, env, ...USER, stdio: ['ignore', 'pipe', 'pipe'] });
    service.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
    });
    service.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
    });
    const exited = new Promise<number | null>((resolve) => service?.once('close', resolve));

    // Healthy, by the image's HEALTHCHECK command (bounded: a start on a busy machine takes seconds).
    const healthcheck = execForm(argsOf(final ?? { instructions: [] }, 'HEALTHCHECK')[0] ?? '');
    const healthy = async () => {
      for (const deadline = Date.now() + 90_000; Date.now() < deadline; ) {
        try {
          runAs(healthcheck, env, 10_000);
          return true;
        } catch {
          if (service?.exitCode !== null) return false;
          await new Promise((resolve) => setTimeout(resolve, 250));
        }
      }
      return false;
    };
    expect(await healthy(), output).toBe(true);
    await expect.poll(() => existsSync(join(data, 'first-api-key')), { timeout: 10_000 }).toBe(true);
    expect(statSync(join(data, 'first-api-key')).mode & 0o777).toBe(0o600);

    // A key, as an operator creates one in the container (`docker exec … node scripts/keys.mjs create`).
    const created = runAs(['node', 'scripts/keys.mjs', 'create', '--account', 'ops', '--label', 'install test'], env);
    const key = created.match(KEY_PATTERN)?.[0] as string;
    expect(key).toBeDefined();
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
    expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);

    service.kill('SIGTERM');
    expect(await exited, output).toBe(0);
    expect(snapshot(app)).toEqual(before);
    expect(readdirSync(data)).toEqual(expect.arrayContaining(['domain-space.sqlite', 'first-api-key']));
  });
});
