// The packed client as a consumer gets it: `npm pack` in client/, `npm install <tarball>` into an empty project
// outside the repository (from the npm registry), a consumer program type-checked under strict without Node
// types, then compiled and run against a real server, as an ES module and from CommonJS (`require`). CI runs it
// on Node.js 20 and on 24. Needs the npm registry (or a warm npm cache).

import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { SCOPES } from '../../server/accounts/key-policy.js';
import { issueKey } from '../../server/accounts/keys.js';
import { startServer, type TestServer } from '../support/server.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));
const tsc = join(root, 'node_modules/.bin/tsc');
const consumerSource = readFileSync(new URL('./consumer.ts.txt', import.meta.url), 'utf8');

interface PackResult {
  filename: string;
  files: { path: string }[];
}

let project: string;
let packed: PackResult;

beforeAll(async () => {
  project = mkdtempSync(join(tmpdir(), 'dss-client-consumer-'));
  // prepack builds dist/ first.
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', project], {
    cwd: join(root, 'client'),
    timeout: 120_000,
  });
  packed = (JSON.parse(stdout.slice(stdout.indexOf('['))) as PackResult[])[0] as PackResult;
  writeFileSync(join(project, 'package.json'), `${JSON.stringify({ private: true, type: 'module' }, null, 2)}\n`);
  await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', join(project, packed.filename)], {
    cwd: project,
    timeout: 120_000,
  });
}, 240_000);

afterAll(() => {
  if (project) rmSync(project, { recursive: true, force: true });
});

describe('the tarball', () => {
  test('holds the compiled package only: no sources, no tests', () => {
    const paths = packed.files.map((file) => file.path).sort();
    expect(paths).toContain('package.json');
    expect(paths).toContain('README.md');
    expect(paths).toContain('LICENSE');
    expect(paths).toContain('dist/client/src/index.js');
    expect(paths).toContain('dist/client/src/index.d.ts');
    // The CommonJS twin, marked as such for Node and TypeScript.
    expect(paths).toContain('dist/cjs/client/src/index.js');
    expect(paths).toContain('dist/cjs/client/src/index.d.ts');
    expect(paths).toContain('dist/cjs/package.json');
    // The generated contract types travel inside the package.
    expect(paths).toContain('dist/generated/api.d.ts');
    const stray = paths.filter(
      (path) =>
        !['package.json', 'README.md', 'LICENSE', 'dist/cjs/package.json'].includes(path) &&
        !/^dist\/.*(\.js|\.d\.ts)$/.test(path),
    );
    expect(stray).toEqual([]);
  });

  test('depends on openapi-fetch alone', () => {
    const manifest = JSON.parse(
      readFileSync(join(project, 'node_modules/domain-space-client/package.json'), 'utf8'),
    ) as Record<string, unknown>;
    expect(manifest.dependencies).toEqual({ 'openapi-fetch': expect.stringMatching(/^\^0\.17\./) });
    // Its build tool, which a consumer's install leaves out.
    expect(Object.keys((manifest.devDependencies ?? {}) as object)).toEqual(['typescript']);
    expect(manifest.peerDependencies).toBeUndefined();
  });

  test('is MIT licensed, with the license text inside', () => {
    const manifest = JSON.parse(readFileSync(join(project, 'node_modules/domain-space-client/package.json'), 'utf8'));
    expect(manifest.license).toBe('MIT');
    const license = readFileSync(join(project, 'node_modules/domain-space-client/LICENSE'), 'utf8');
    expect(license).toMatch(/^MIT License\n/);
    expect(license).toBe(readFileSync(join(root, 'LICENSE'), 'utf8'));
  });

  test('its modules never reach outside the package', () => {
    const modules = packed.files.map((file) => file.path).filter((path) => /\.(js|d\.ts)$/.test(path));
    expect(modules.length).toBeGreaterThan(0);
    for (const path of modules) {
      const text = readFileSync(join(project, 'node_modules/domain-space-client', path), 'utf8');
      const specifiers = [...text.matchAll(/from '([^']+)'|require\("([^"]+)"\)/g)].map((m) => m[1] ?? m[2] ?? '');
      for (const specifier of specifiers) {
        if (!specifier.startsWith('.')) {
          expect(['openapi-fetch']).toContain(specifier);
          continue;
        }
        const target = join(path, '..', specifier);
        expect(target.startsWith('dist/'), `${path} imports ${specifier}`).toBe(true);
      }
    }
  });
});

describe('a consumer project', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
    writeFileSync(join(project, 'consumer.ts'), consumerSource);
  });
  afterAll(() => server?.close());

  const compilerOptions = {
    strict: true,
    target: 'ES2022',
    lib: ['ES2022', 'DOM'],
    // No @types at all: the client's declarations must not need Node's.
    types: [],
    typeRoots: [],
    skipLibCheck: false,
    noUncheckedIndexedAccess: true,
    exactOptionalPropertyTypes: true,
  };

  /** tsc on `files` with the strict options and `options`: its exit code and all it printed (nothing, when clean). */
  async function typeCheck(config: string, options: object, files: string[]) {
    writeFileSync(
      join(project, config),
      JSON.stringify({ compilerOptions: { ...compilerOptions, ...options }, files }),
    );
    // The exit code too: a tsc that cannot start at all prints nothing either.
    return run(tsc, ['-p', config], { cwd: project, timeout: 60_000 }).then(
      ({ stdout, stderr }) => ({ code: 0 as unknown, output: `${stdout}${stderr}` }),
      (error) => ({
        code: error.code as unknown,
        output: `${error.stdout ?? ''}${error.stderr ?? ''}${error.message}`,
      }),
    );
  }

  // One tsc run under NodeNext checks the ES module, checks the CommonJS module (.cts) and compiles them: each tsc
  // start costs seconds (lib.dom.d.ts alone). Two modules in one program see nothing of each other's.
  test('type-checks under strict with moduleResolution nodenext, as an ES module and as CommonJS (.cts)', async () => {
    writeFileSync(join(project, 'consumer-cjs.cts'), CJS_TYPED_CONSUMER);
    const nodenext = { module: 'NodeNext', moduleResolution: 'NodeNext', outDir: 'out' };
    const result = await typeCheck('tsconfig.json', nodenext, ['consumer.ts', 'consumer-cjs.cts']);
    expect(result.output).toBe('');
    expect(result.code).toBe(0);
  }, 90_000);

  test('type-checks under strict with moduleResolution bundler', async () => {
    const bundler = { module: 'ESNext', moduleResolution: 'Bundler', noEmit: true };
    const result = await typeCheck('tsconfig.bundler.json', bundler, ['consumer.ts']);
    expect(result.output).toBe('');
    expect(result.code).toBe(0);
  }, 90_000);

  test('runs against the server: lists, creates, updates and deletes domains and spaces', async () => {
    // Compiled by the NodeNext check above.
    expect(existsSync(join(project, 'out/consumer.js'))).toBe(true);
    // Every scope by name, api_keys:write included (which a key made without scopes lacks).
    const { key } = await issueKey(server.db, 'consumer', { scopes: [...SCOPES] });
    const { stdout } = await run('node', ['out/consumer.js'], {
      cwd: project,
      timeout: 60_000,
      env: { ...process.env, DSS_API_URL: server.apiUrl, DSS_API_KEY: key },
    });

    mkdirSync(join(root, 'test-results'), { recursive: true });
    writeFileSync(
      join(root, 'test-results/client-consumer.txt'),
      `# consumer.ts (compiled with tsc under strict, no @types; run with node)\n\n${consumerSource}\n# output\n\n${stdout}`,
    );

    expect(stdout.trimEnd().split('\n')).toEqual([
      'created domain #1 shop.consumer.example index_page=https://shop.consumer.example/welcome.html',
      'updated domain #1 not_found_page=https://shop.consumer.example/404.html',
      'replaced domain #1 index_page=null',
      'listed 1 domain(s): shop.consumer.example (shown: shop.consumer.example)',
      expect.stringMatching(/^caught ApiError 409 Conflict: .*shop\.consumer\.example.* \(request id: yes\)$/),
      'created space #1 Marketing color=3',
      'updated space #1 color=5',
      'listAll spaces: Design, Marketing, Sales, Support',
      expect.stringMatching(/^event types: \d+, space\.created needs spaces:read$/),
      'created endpoint #1 rate_limit=5 headers=X-Gateway-Key',
      'recovery #1 of endpoint #1: running',
      'deleted domain #1: get answers 404',
      'spaces left: 0',
      'made a key: true scopes=spaces:read secret shown',
      'rotated: rotated, successor active',
      'keys listed: 2',
      'key events of this key: api_key.revoked, api_key.rotated, api_key.created, api_key.created',
    ]);
  }, 90_000);

  test('runs from CommonJS: require() gets the same client, and it works against the server', async () => {
    writeFileSync(join(project, 'consumer.cjs'), CJS_CONSUMER);
    const { key } = await server.account('consumer-cjs');
    const { stdout } = await run('node', ['consumer.cjs'], {
      cwd: project,
      timeout: 60_000,
      env: { ...process.env, DSS_API_URL: server.apiUrl, DSS_API_KEY: key },
    });
    expect(stdout.trimEnd().split('\n')).toEqual([
      'require: createClient function, ApiError function, VERSION 0.1.0',
      'created space Required color=4',
      'listed 1 space(s)',
      'caught ApiError 404 (request id: yes)',
      'raw POST /webhook-endpoints: 201',
      'forged delivery: threw WebhookVerificationError at once',
    ]);
  }, 60_000);
});

/** A CommonJS program, as a project without "type": "module" has it. */
const CJS_CONSUMER = `'use strict';
const { ApiError, createClient, VERSION, verifyWebhook } = require('domain-space-client');

console.log(\`require: createClient \${typeof createClient}, ApiError \${typeof ApiError}, VERSION \${VERSION}\`);
const api = createClient({ baseUrl: process.env.DSS_API_URL, apiKey: process.env.DSS_API_KEY });

(async () => {
  const space = await api.spaces.create({ name: 'Required', color: 4 });
  console.log(\`created space \${space.name} color=\${space.color}\`);
  const page = await api.spaces.list();
  console.log(\`listed \${page.meta.total} space(s)\`);
  try {
    await api.spaces.get(space.id + 1000);
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    console.log(\`caught ApiError \${error.status} (request id: \${error.requestId ? 'yes' : 'no'})\`);
  }
  // The client's defaults send forms; this operation takes JSON only, and gets it.
  const created = await api.raw.POST('/webhook-endpoints', {
    body: { url: 'https://hooks.example.com/dss', enabled_events: ['space.created'] },
  });
  console.log(\`raw POST /webhook-endpoints: \${created.response.status}\`);
  const forged = {
    'webhook-id': 'evt_000000000000000000000001',
    'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
    'webhook-signature': 'v1,' + 'A'.repeat(43) + '=',
  };
  let outcome = 'accepted';
  try {
    verifyWebhook(created.data.secret, '{"id":"evt_000000000000000000000001"}', forged);
  } catch (error) {
    outcome = \`threw \${error.name} at once\`;
  }
  console.log(\`forged delivery: \${outcome}\`);
})().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
`;

/** The same in TypeScript compiled as CommonJS (.cts), type-checked only. */
const CJS_TYPED_CONSUMER = `import { ApiError, createClient, type Space } from 'domain-space-client';

declare const process: { env: Record<string, string | undefined> };
const api = createClient({ baseUrl: process.env.DSS_API_URL ?? '', apiKey: process.env.DSS_API_KEY ?? '' });
export async function main(): Promise<Space> {
  try {
    return await api.spaces.create({ name: 'Typed', color: 2 });
  } catch (error) {
    if (error instanceof ApiError) console.log(error.status, error.errors);
    throw error;
  }
}
`;
