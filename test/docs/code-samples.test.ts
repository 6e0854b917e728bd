// The docs' code samples are ready to paste: every operation has a curl and a TypeScript sample, each curl
// sample does what it says against a running server, the README's first calls too, and every TypeScript sample
// (the spec's guide's, the README's and the API guide's) compiles against the client under strict.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spec } from '../support/contract.js';
import { startServer, type TestAccount, type TestServer } from '../support/server.js';
import { operations, type SpecOperation } from '../support/spec-operations.js';

const run = promisify(execFile);
const root = new URL('../..', import.meta.url).pathname;
const SAMPLE_ORIGIN = 'http://127.0.0.1:3000';

const sampleOf = (op: SpecOperation, lang: string) => op.codeSamples[lang] ?? '';
const guide = (spec.document.info as { description: string }).description;
const tsBlocks = (markdown: string) => [...markdown.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1] ?? '');
const guideBlocks = tsBlocks(guide);
const readme = readFileSync(join(root, 'README.md'), 'utf8');
const documentBlocks = ['README.md', 'spec/GUIDE.md'].flatMap((file) =>
  tsBlocks(readFileSync(join(root, file), 'utf8')).map((block, i) => [`${file.replace(/\W/g, '-')}-${i}`, block]),
);

describe('every operation', () => {
  it.each(operations.map((op) => [op.operationId, op] as const))('%s has a curl and a TypeScript sample', (_, op) => {
    expect(sampleOf(op, 'Shell')).toMatch(/^curl /);
    expect(sampleOf(op, 'TypeScript')).toMatch(/from 'domain-space-client'/);
  });
});

/** Type-checks sources as modules importing the client's sources as 'domain-space-client'. */
async function typecheck(sources: Record<string, string>): Promise<{ ok: boolean; output: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'dss-samples-'));
  try {
    for (const [name, source] of Object.entries(sources)) writeFileSync(join(dir, `${name}.ts`), source);
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          noEmit: true,
          target: 'ES2022',
          module: 'ESNext',
          moduleResolution: 'bundler',
          lib: ['ES2022', 'DOM'],
          types: ['node'],
          typeRoots: [join(root, 'node_modules/@types')],
          skipLibCheck: true,
          paths: { 'domain-space-client': [join(root, 'client/src/index.ts')] },
        },
        include: ['*.ts'],
      }),
    );
    const tsc = join(root, 'node_modules/.bin/tsc');
    try {
      const { stdout } = await run(tsc, ['-p', join(dir, 'tsconfig.json')], { cwd: dir });
      return { ok: true, output: stdout };
    } catch (error) {
      return { ok: false, output: String((error as { stdout?: string }).stdout ?? error) };
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('the TypeScript samples', () => {
  it('compile against the client under strict, with the guide’s', async () => {
    expect(guideBlocks.length).toBeGreaterThan(0);
    const sources = Object.fromEntries([
      ...operations.map((op) => [op.operationId, sampleOf(op, 'TypeScript')]),
      ...guideBlocks.map((block, i) => [`guide-${i}`, block]),
      ...documentBlocks,
    ]);
    expect(documentBlocks.length).toBeGreaterThan(1);
    const result = await typecheck(sources);
    expect(result.output).toBe('');
    expect(result.ok).toBe(true);
  }, 60_000);

  it('would fail a sample that breaks the client’s types (the check is real)', async () => {
    const broken = sampleOf(operations.find((op) => op.operationId === 'domains_patch') as SpecOperation, 'TypeScript');
    const result = await typecheck({
      broken: `${broken}\nawait api.domains.update(1, { name: 'renamed.example' });\n`,
    });
    expect(result.ok).toBe(false);
    expect(result.output).toMatch(/name/);
  }, 60_000);
});

describe('the curl samples, run against the service', () => {
  let server: TestServer;
  let account: TestAccount;
  const ids: Record<string, number> = {};

  beforeAll(async () => {
    server = await startServer();
    account = await server.account('samples');
  });
  afterAll(() => server.close());

  /** Runs a sample as pasted, pointed at this server with this account's key and, for one record, its id. */
  async function paste(operationId: string): Promise<string> {
    const op = operations.find((each) => each.operationId === operationId) as SpecOperation;
    const resource = operationId.split('_')[0] as string;
    let source = sampleOf(op, 'Shell').replaceAll(SAMPLE_ORIGIN, server.origin);
    if (ids[resource] !== undefined)
      source = source.replace(new RegExp(`/${resource}/\\d+`), `/${resource}/${ids[resource]}`);
    const { stdout } = await run('bash', ['-c', source], { env: { ...process.env, DSS_API_KEY: account.key } });
    return stdout;
  }

  it.each(['domains', 'spaces'])('%s: store, list, show, PUT, PATCH and delete do what they say', async (resource) => {
    const stored = JSON.parse(await paste(`${resource}_store`)) as { data: { id: number; name: string } };
    ids[resource] = stored.data.id;
    // The list sample searches for what the store sample made (before the PUT sample renames a space).
    const listed = JSON.parse(await paste(`${resource}_list`)) as { data: Array<{ id: number }> };
    expect(listed.data.map((each) => each.id)).toContain(stored.data.id);
    for (const step of ['show', 'update', 'patch']) {
      const answer = JSON.parse(await paste(`${resource}_${step}`)) as { data?: { id: number }; type?: string };
      expect(answer.type, `${resource}_${step} answered a problem: ${JSON.stringify(answer)}`).toBeUndefined();
      expect(answer.data?.id).toBe(stored.data.id);
    }
    expect((await paste(`${resource}_delete`)).trim()).toBe('204');
    const gone = await server.fetch(`/api/v1/${resource}/${stored.data.id}`, {
      headers: { Authorization: `Bearer ${account.key}` },
    });
    expect(gone.status).toBe(404);
  });
});

describe("the README's first calls, run as printed", () => {
  let server: TestServer;
  let dir: string;

  beforeAll(async () => {
    server = await startServer();
    dir = mkdtempSync(join(tmpdir(), 'dss-readme-'));
  });
  afterAll(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('store a space and list it, with the key the first start wrote', async () => {
    const block = /## Your first calls[\s\S]*?```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
    expect(block).toContain('data/first-api-key');
    // Where `npm start` would have written the first key, this test's account key; this server for the default.
    const account = await server.account('readme');
    mkdirSync(join(dir, 'data'));
    writeFileSync(join(dir, 'data', 'first-api-key'), account.key);
    const { stdout } = await run('bash', ['-c', block.replaceAll(SAMPLE_ORIGIN, server.origin)], { cwd: dir });
    // Two answers, one after the other: the stored space, then the list that holds it.
    const split = stdout.indexOf('}{"data":[');
    const stored = JSON.parse(stdout.slice(0, split + 1)) as { data: { id: number; name: string } };
    const listed = JSON.parse(stdout.slice(split + 1)) as { data: Array<{ id: number }> };
    expect(stored.data.name).toBe('Marketing');
    expect(listed.data.map((space) => space.id)).toContain(stored.data.id);
  });
});
