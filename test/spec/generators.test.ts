// Third-party generators, run with their default options on the bundled spec as a consumer would, must produce
// correct types: a small consumer program type-checks against each output under strict (a space created without
// `color` compiles), and every `@ts-expect-error` line (a wrong type, a missing required field) must fail.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';

const run = promisify(execFile);
const root = resolve(import.meta.dirname, '../..');
const spec = join(root, 'generated/openapi.yaml');
const bin = (name: string) => join(root, 'node_modules/.bin', name);
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'dss-generators-'));
});
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** tsc under strict, no @types; the exit code and everything it printed. */
async function typeCheck(file: string): Promise<{ code: unknown; output: string }> {
  const compilerOptions = {
    noEmit: true,
    strict: true,
    target: 'ES2022',
    lib: ['ES2022', 'DOM'],
    types: [],
    typeRoots: [],
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
  };
  const config = `tsconfig.${file}.json`;
  writeFileSync(join(dir, config), JSON.stringify({ compilerOptions, files: [file] }));
  return run(bin('tsc'), ['-p', config], { cwd: dir, timeout: 90_000 }).then(
    ({ stdout, stderr }) => ({ code: 0 as unknown, output: `${stdout}${stderr}` }),
    (error) => ({ code: error.code as unknown, output: `${error.stdout ?? ''}${error.stderr ?? ''}` }),
  );
}

describe('openapi-typescript, default options', () => {
  test('types a create without color, and refuses wrong types', { timeout: 180_000 }, async () => {
    await run(bin('openapi-typescript'), [spec, '-o', join(dir, 'ot-api.ts')], { timeout: 60_000 });
    writeFileSync(
      join(dir, 'ot-consumer.ts'),
      `import type { components, paths } from './ot-api.js';
type SpaceCreate = paths['/spaces']['post']['requestBody']['content']['application/json'];
type SpaceCreateForm = paths['/spaces']['post']['requestBody']['content']['application/x-www-form-urlencoded'];
type DomainCreate = paths['/domains']['post']['requestBody']['content']['application/json'];
type DomainUpdate = NonNullable<paths['/domains/{id}']['patch']['requestBody']>['content']['application/json'];
type Space = components['schemas']['space'];
type Domain = components['schemas']['domain'];
type ListQuery = NonNullable<paths['/domains']['get']['parameters']['query']>;

export const withoutColor: SpaceCreate = { name: 'Marketing' };
export const withoutColorForm: SpaceCreateForm = { name: 'Marketing' };
export const withColor: SpaceCreate = { name: 'Marketing', color: 3 };
export const domain: DomainCreate = { name: 'shop.example.com' };
export const clearPage: DomainUpdate = { not_found_page: null };
export const noQuery: ListQuery = {};
declare const space: Space;
declare const stored: Domain;
export const color: number = space.color;
export const page: string | null = stored.index_page;

// @ts-expect-error color is a number
export const colorAsText: SpaceCreate = { name: 'Marketing', color: '3' };
// @ts-expect-error name is required
export const noName: SpaceCreate = { color: 3 };
// @ts-expect-error a domain's name cannot change
export const rename: DomainUpdate = { name: 'other.example' };
// @ts-expect-error a stored space always has its colour
export const noColor: Space = { id: 1, name: 'x', created_at: '', updated_at: '' };
// @ts-expect-error per_page is one of 10, 25, 50, 100
export const perPage: ListQuery = { per_page: 7 };
`,
    );
    const result = await typeCheck('ot-consumer.ts');
    expect(result.output).toBe('');
    expect(result.code).toBe(0);
  });
});

describe('swagger-typescript-api, default options', () => {
  test('types a create without color, and refuses wrong types', { timeout: 180_000 }, async () => {
    await run(bin('swagger-typescript-api'), ['generate', '-p', spec, '-o', dir, '-n', 'sta-api.ts', '--silent'], {
      timeout: 90_000,
    });
    writeFileSync(
      join(dir, 'sta-consumer.ts'),
      `import { Api, type Space, type SpaceStore, type DomainUpdate } from './sta-api.js';

const api = new Api({ baseUrl: 'http://127.0.0.1:3000/api/v1' });
export const create = () => api.spaces.spacesStore({ name: 'Marketing' });
export const withColor: SpaceStore = { name: 'Marketing', color: 3 };
export const clearPage: DomainUpdate = { not_found_page: null };
declare const space: Space;
export const color: number = space.color;

// @ts-expect-error color is a number
export const colorAsText: SpaceStore = { name: 'Marketing', color: '3' };
// @ts-expect-error name is required
export const noName = () => api.spaces.spacesStore({ color: 3 });
// @ts-expect-error a domain's name cannot change
export const rename: DomainUpdate = { name: 'other.example' };
`,
    );
    const result = await typeCheck('sta-consumer.ts');
    expect(result.output).toBe('');
    expect(result.code).toBe(0);
  });
});
