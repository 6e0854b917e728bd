// The client's README install, run exactly as printed in a fresh clone of the committed tree: no root `npm ci`,
// and no tsc from this repository's node_modules on the PATH. Needs the npm registry (or a warm npm cache).
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, test } from 'vitest';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));
let clone: string;

/** The commands of the README's Install block that build the package: up to and including `npm pack`. */
function readmeBuildCommands(): string[] {
  const readme = readFileSync(join(root, 'client/README.md'), 'utf8');
  const block = /## Install[\s\S]*?```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
  const commands = block
    .split('\n')
    .map((line) => line.replace(/\s+#.*$/, '').trim())
    .filter(Boolean);
  return commands.slice(0, commands.findIndex((command) => command.startsWith('npm pack')) + 1);
}

beforeAll(async () => {
  clone = mkdtempSync(join(tmpdir(), 'dss-fresh-clone-'));
  await run('git', ['clone', '--quiet', '--depth', '1', `file://${root}`, clone], { timeout: 60_000 });
}, 90_000);

afterAll(() => {
  if (clone) rmSync(clone, { recursive: true, force: true });
});

test('the README commands build and pack the client in a fresh clone', { timeout: 400_000 }, async () => {
  const commands = readmeBuildCommands();
  expect(commands).toEqual(['cd client', 'npm ci', 'npm pack']);
  // `npm test` puts this repository's node_modules/.bin (with its tsc) on the PATH; a new user has none of it.
  const PATH = (process.env.PATH ?? '')
    .split(delimiter)
    .filter((entry) => !entry.includes('node_modules'))
    .join(delimiter);
  await run('sh', ['-ec', commands.join(' && ')], {
    cwd: clone,
    timeout: 380_000,
    env: { ...process.env, PATH, npm_config_audit: 'false', npm_config_fund: 'false' },
  });
  expect(readdirSync(join(clone, 'client'))).toContain('domain-space-client-0.1.0.tgz');
  const { stdout } = await run('tar', ['-tzf', join(clone, 'client/domain-space-client-0.1.0.tgz')]);
  expect(stdout.split('\n')).toEqual(
    expect.arrayContaining([
      'package/dist/client/src/index.js',
      'package/dist/client/src/index.d.ts',
      'package/dist/generated/api.d.ts',
    ]),
  );
});
