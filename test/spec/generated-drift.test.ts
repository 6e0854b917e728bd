// `npm run check:generated` passes on the committed tree and fails once spec/ changes without regenerating.
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = resolve(import.meta.dirname, '../..');
let copy: string;

async function check(dir: string): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await run(join(root, 'node_modules/.bin/tsx'), ['scripts/generate.ts', '--check'], {
      cwd: dir,
    });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, output: failed.stdout + failed.stderr };
  }
}

beforeAll(() => {
  copy = mkdtempSync(join(tmpdir(), 'dss-drift-'));
  for (const dir of ['spec', 'scripts', 'generated']) cpSync(join(root, dir), join(copy, dir), { recursive: true });
  symlinkSync(join(root, 'node_modules'), join(copy, 'node_modules'));
});
afterAll(() => rmSync(copy, { recursive: true, force: true }));

describe('check:generated', () => {
  it('passes when generated/ is what spec/ produces', async () => {
    const { code, output } = await check(copy);
    expect(output).toContain('up to date');
    expect(code).toBe(0);
  });

  it('fails when spec/ changed and generated/ was not regenerated', async () => {
    const file = join(copy, 'spec/components/schemas/color.yaml');
    writeFileSync(file, readFileSync(file, 'utf8').replace('maximum: 6', 'maximum: 7'));
    const { code, output } = await check(copy);
    expect(code).toBe(1);
    expect(output).toMatch(/generated\/ is stale \(.*openapi\.yaml.*\)/);
  });
});
