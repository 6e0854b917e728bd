// `npm start` as an operator runs it with stdout going to a log collector: with --silent, stdout carries only the
// service's JSON lines; without it, npm's banner comes first, and the service says on stderr how to leave it out.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from './process.js';

const dir = mkdtempSync(join(tmpdir(), 'dss-npm-start-'));
const children = new Set<ChildProcess>();
afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

/** `npm start` with `flags`, stopped (SIGTERM to npm, which passes it on) once the banner is out. */
async function npmStart(flags: string[]): Promise<{ stdout: string; stderr: string }> {
  const child = spawn('npm', ['start', ...flags], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      DATABASE_URL: `sqlite:${join(dir, `${flags.join('') || 'plain'}.sqlite`)}`,
      FIRST_KEY_FILE: join(dir, `${flags.join('') || 'plain'}-key`),
      DSS_BUILD_DOCS: '0',
      DRAIN_DELAY_S: '0',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  const listening = new Promise<void>((resolve) => {
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
      if (/curl [^\n]*\n/.test(stderr)) resolve();
    });
  });
  const exited = new Promise((resolve) => child.once('close', resolve));
  await Promise.race([listening, exited]);
  child.kill('SIGTERM');
  await exited;
  children.delete(child);
  return { stdout, stderr };
}

describe('npm start', { timeout: 120_000 }, () => {
  it('with --silent writes only JSON lines to stdout', async () => {
    const { stdout, stderr } = await npmStart(['--silent']);
    expect(stderr).toContain('listening on');
    const lines = stdout.split('\n').filter((line) => line !== '');
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(() => JSON.parse(line), line).not.toThrow();
    expect(stderr).not.toContain('npm printed its banner');
  });

  it('without it, says on stderr that npm wrote its banner to stdout, and how to leave it out', async () => {
    const { stdout, stderr } = await npmStart([]);
    expect(stdout).toMatch(/^\n> domain-space-service@\S+ start\n/);
    expect(stderr).toContain('npm printed its banner to stdout before the JSON log: run `npm start --silent`');
  });
});
