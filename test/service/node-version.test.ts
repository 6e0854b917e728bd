// `npm start` on an untested Node.js major: refused with a clear message, or started with a warning when
// DSS_ALLOW_UNTESTED_NODE=1. The process tests start the real entry point with process.version replaced
// before anything of ours runs, as an untested runtime would report itself.
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkNodeVersion, TESTED_NODE_MAJORS } from '../../server/node-version.js';
import { freshDatabase, type TestDatabase } from '../support/database.js';
import { ROOT } from './process.js';

const SLOW = { timeout: 60_000 };

describe('checkNodeVersion', () => {
  it('accepts the tested majors, the running one included', () => {
    expect(TESTED_NODE_MAJORS).toEqual([20, 24]);
    expect(checkNodeVersion('v20.20.2', {})).toBeUndefined();
    expect(checkNodeVersion('v24.21.0', {})).toBeUndefined();
    expect(checkNodeVersion(process.version, {})).toBeUndefined();
  });

  it('refuses other majors, naming the tested ones and the way out', () => {
    for (const version of ['v18.20.4', 'v22.14.0', 'v26.1.0', 'garbage']) {
      const problem = checkNodeVersion(version, {});
      expect(problem?.level).toBe('error');
      expect(problem?.message).toContain(`not ${version}`);
      expect(problem?.message).toContain('Node.js 20.x and 24.x');
      expect(problem?.message).toContain('DSS_ALLOW_UNTESTED_NODE=1');
    }
  });

  it('only warns when DSS_ALLOW_UNTESTED_NODE=1', () => {
    expect(checkNodeVersion('v26.1.0', { DSS_ALLOW_UNTESTED_NODE: '1' })).toEqual({
      level: 'warning',
      message: 'warning: Node.js v26.1.0 is untested (tested: 20.x and 24.x); starting anyway',
    });
    expect(checkNodeVersion('v26.1.0', { DSS_ALLOW_UNTESTED_NODE: 'yes' })?.level).toBe('error');
  });
});

describe("npm start's heap settings on this Node.js", () => {
  // The image runs them on Node.js 24, CI's npm start tests on 20: each leg checks that its node takes them.
  const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } };
  const flags = scripts.start.split(' ').filter((word) => word.startsWith('--'));

  it('are V8 options this node knows, and it runs with them', () => {
    expect(flags).toEqual(['--max-semi-space-size=4', '--heap-growing-percent=50']);
    const options = spawnSync(process.execPath, ['--v8-options'], { encoding: 'utf8' }).stdout;
    for (const flag of flags) expect(options).toContain(`  ${flag.split('=')[0]} (`);
    const run = spawnSync(process.execPath, [...flags, '-e', 'process.stdout.write(process.execArgv.join(" "))'], {
      encoding: 'utf8',
    });
    expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 0, stderr: '' });
    expect(run.stdout.split(' ').slice(0, flags.length)).toEqual(flags);
  });
});

describe('server/main.ts on an untested Node.js', () => {
  const databases: TestDatabase[] = [];
  afterAll(() => Promise.all(databases.map((d) => d.drop())));

  /** Runs the entry point as if on Node.js `version`; kills it once it has printed `until` (or ended). */
  async function startAs(version: string, env: Record<string, string>, until: RegExp) {
    const database = await freshDatabase();
    databases.push(database);
    const fake = `data:text/javascript,Object.defineProperty(process,"version",{value:"${version}"})`;
    const child = spawn(process.execPath, ['--import', fake, '--import', 'tsx', 'server/main.ts'], {
      cwd: ROOT,
      env: {
        ...process.env,
        PORT: '0',
        HOST: '127.0.0.1',
        DATABASE_URL: database.url,
        LOG_LEVEL: 'silent',
        DRAIN_DELAY_S: '0',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    // The banner is on stderr, the JSON log on stdout.
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
      if (until.test(stderr)) child.kill('SIGTERM');
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 45_000);
    try {
      const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
      return { code, stdout, stderr };
    } finally {
      clearTimeout(timer);
      child.kill('SIGKILL');
    }
  }

  it('refuses to start, exit code 1, with the message on stderr and nothing served', SLOW, async () => {
    const exit = await startAs('v26.1.0', {}, /listening on/);
    expect(exit.code).toBe(1);
    expect(exit.stderr).toContain('domain-space-service is tested on Node.js 20.x and 24.x, not v26.1.0.');
    expect(exit.stderr).not.toContain('listening on');
    expect(exit.stdout).toBe('');
  });

  it('starts with a warning when DSS_ALLOW_UNTESTED_NODE=1', SLOW, async () => {
    const exit = await startAs('v26.1.0', { DSS_ALLOW_UNTESTED_NODE: '1' }, /listening on http/);
    expect(exit.stderr).toContain('warning: Node.js v26.1.0 is untested (tested: 20.x and 24.x); starting anyway');
    expect(exit.stderr).toContain('domain-space-service listening on http://127.0.0.1:');
  });
});
