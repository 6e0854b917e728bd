// Libraries through their documented API only: no import of a path a package does not export (or, for a
// package without an "exports" map, of a file its documentation does not name), and no use of members a
// library keeps to itself. The next release of a library may move any of those without a compile error.
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '../..');
const SCANNED = ['server', 'client/src', 'scripts'];

/** Deep imports of packages without an "exports" map that their own documentation shows. */
const DOCUMENTED_DEEP_IMPORTS: Record<string, string> = {
  // https://ajv.js.org/json-schema.html#draft-2020-12: `import Ajv2020 from "ajv/dist/2020"`.
  'ajv/dist/2020.js': 'Ajv documents its draft 2020-12 class at this path',
};

/** Members that libraries we use keep to themselves (protected fields, internal steps found by name). */
const UNDOCUMENTED_MEMBERS: Record<string, string> = {
  incrementScriptSha: "rate-limit-redis's protected field",
  pathParamsMiddleware: "express-openapi-validator's internal step",
  metadataMiddleware: "express-openapi-validator's internal step",
  requestMiddleware: "express-openapi-validator's internal step",
  responseMiddleware: "express-openapi-validator's internal step",
  installPathParams: "express-openapi-validator's internal method",
  _router: "Express's private router field",
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' || entry.name === 'dist' ? [] : sourceFiles(path);
    return /\.(ts|mts|cts|mjs|js)$/.test(entry.name) ? [path] : [];
  });
}

const IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+|\brequire\s*\(\s*)['"]([^'"\n]+)['"]/g;

/** The package name and the subpath of a bare specifier (`@scope/name/sub` -> [`@scope/name`, `./sub`]). */
function splitSpecifier(specifier: string): [string, string] {
  const parts = specifier.split('/');
  const size = specifier.startsWith('@') ? 2 : 1;
  const rest = parts.slice(size).join('/');
  return [parts.slice(0, size).join('/'), rest === '' ? '.' : `./${rest}`];
}

function exportsOf(name: string, from: string): Record<string, unknown> | undefined {
  const require = createRequire(join(from, 'package.json'));
  let manifest: { exports?: unknown };
  try {
    manifest = require(`${name}/package.json`);
  } catch {
    // A package whose exports map hides package.json: read it from its folder.
    const folder = join(ROOT, 'node_modules', name, 'package.json');
    manifest = JSON.parse(readFileSync(folder, 'utf8'));
  }
  const { exports } = manifest;
  if (exports === undefined) return undefined;
  if (typeof exports === 'string' || Array.isArray(exports)) return { '.': exports };
  const keys = Object.keys(exports as object);
  return keys.some((key) => key.startsWith('.')) ? (exports as Record<string, unknown>) : { '.': exports };
}

function exported(map: Record<string, unknown>, subpath: string): boolean {
  if (subpath in map) return map[subpath] !== null;
  return Object.keys(map).some((key) => {
    const star = key.indexOf('*');
    return star >= 0 && subpath.startsWith(key.slice(0, star)) && subpath.endsWith(key.slice(star + 1));
  });
}

/** What in one source text reaches past a library's documented API. */
function violations(source: string, file: string, packageRoot = ROOT): string[] {
  const found: string[] = [];
  for (const [, specifier = ''] of source.matchAll(IMPORT)) {
    if (specifier.startsWith('.') || specifier.startsWith('node:') || specifier.startsWith('/')) continue;
    const [name, subpath] = splitSpecifier(specifier);
    if (subpath === '.') continue;
    const map = exportsOf(name, packageRoot);
    const allowed = map ? exported(map, subpath) : specifier in DOCUMENTED_DEEP_IMPORTS;
    if (!allowed) found.push(`${file}: imports ${specifier}, which ${name} does not export or document`);
  }
  for (const [member, whose] of Object.entries(UNDOCUMENTED_MEMBERS)) {
    if (new RegExp(`\\b${member}\\b`).test(source)) found.push(`${file}: uses ${member} (${whose})`);
  }
  return found;
}

describe('library boundaries', () => {
  it('finds nothing in server/, client/src/ and scripts/', () => {
    const found = SCANNED.flatMap((dir) =>
      sourceFiles(join(ROOT, dir)).flatMap((path) => violations(readFileSync(path, 'utf8'), relative(ROOT, path))),
    );
    expect(found).toEqual([]);
  });

  it.each([
    ["import { fullFormats } from 'ajv-formats/dist/formats.js';", /ajv-formats\/dist\/formats\.js/],
    ["import x from 'express-rate-limit/dist/index.mjs';", /express-rate-limit\/dist\/index\.mjs/],
    ["const m = await import('kysely/dist/esm/index.js');", /kysely\/dist\/esm\/index\.js/],
    ['store.incrementScriptSha = Promise.resolve(sha);', /incrementScriptSha/],
    ["steps.find((s) => s.name === 'requestMiddleware')", /requestMiddleware/],
  ])('reports %s', (source, expected) => {
    const found = violations(source, 'example.ts');
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(expected);
  });

  it.each([
    "import { Ajv2020 } from 'ajv/dist/2020.js';",
    "import { PostgresDialect } from 'kysely';",
    "import { parse } from 'yaml';",
    "import type { Store } from 'express-rate-limit';",
  ])('accepts %s', (source) => {
    expect(violations(source, 'example.ts')).toEqual([]);
  });
});
