// Libraries through their documented API only, as rules over the source: no import of a path a package does not
// export (or, for a package without an "exports" map, of a file its documentation does not name), no `._member`
// of another's object, no `Class.prototype.method.call` around an instance, no `require` of a package's second
// build. The next release of a library may move any of those without a compile error.
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

/** Prototype calls on a class of Node's own that its documentation offers no other way to make. */
const DOCUMENTED_PROTOTYPE_CALLS: Record<string, string> = {
  'net.Server.prototype.close':
    'http.Server (documented as extending net.Server) has no documented way to stop accepting and leave idle keep-alive connections open; its own close() drops them at once (server/lifecycle.ts)',
};

/**
 * Packages loaded through `createRequire` whose ES module entry is only a wrapper of the same CommonJS build, so
 * that `require` and `import` give one copy (the rule below refuses the others: a second copy breaks `instanceof`).
 */
const ONE_BUILD_BEHIND_IMPORT: Record<string, string> = {
  pg: 'pg/esm/index.mjs re-exports ../lib/index.js, the file require loads',
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

// `x._member` on anything but `this`: a leading underscore is how JavaScript libraries mark what is theirs alone.
const PRIVATE_MEMBER = /(?<!\bthis)(?<=[\w$)\]])\.(_[A-Za-z]\w*)/g;
// `lib.Class.prototype.method.call(obj)` or `.apply(...)`: a class's own method driven around what the instance
// does. The language's own built-ins (`Object.prototype.hasOwnProperty.call`) are not a library's.
const PROTOTYPE_CALL =
  /(?<![\w$.])(?!(?:Object|Array|Function|String|Number|Symbol|RegExp|Promise|Map|Set)\.prototype)([A-Za-z_$][\w$]*(?:\.[\w$]+)*)\.prototype\.([\w$]+)\.(?:call|apply)\b/g;
// `createRequire(...)('pkg')`, or a `require` made by it: which package is loaded as CommonJS from an ES module.
const REQUIRED = /\b(?:createRequire\([^)]*\)|require)\(\s*['"]([^'".][^'"\n]*)['"]\s*\)/g;

/** Whether a package has an ES module build that `require` would load a second copy beside. */
function hasSeparateImportBuild(name: string, packageRoot: string): boolean {
  const map = exportsOf(name, packageRoot);
  const root = map?.['.'];
  return typeof root === 'object' && root !== null && 'import' in root && !(name in ONE_BUILD_BEHIND_IMPORT);
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
  for (const [, member] of source.matchAll(PRIVATE_MEMBER)) {
    found.push(`${file}: reads ${member}, a member its owner keeps to itself`);
  }
  for (const [, owner, method] of source.matchAll(PROTOTYPE_CALL)) {
    if (`${owner}.prototype.${method}` in DOCUMENTED_PROTOTYPE_CALLS) continue;
    found.push(`${file}: calls ${owner}.prototype.${method} on an object of another class`);
  }
  for (const [, specifier = ''] of source.matchAll(REQUIRED)) {
    if (specifier.startsWith('node:')) continue;
    const [name] = splitSpecifier(specifier);
    if (hasSeparateImportBuild(name, packageRoot)) {
      found.push(`${file}: requires ${name}, whose ES module build an import loads as a second copy`);
    }
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
    ['const pending = (socket as Duplex & { _httpMessage?: unknown })._httpMessage;', /_httpMessage/],
    ['store._router.stack.pop();', /_router/],
    ['express.Router.prototype.handle.call(router, req, res, done);', /express\.Router\.prototype\.handle/],
    ['Reflect.apply(http.Server.prototype.close.apply(server, []));', /http\.Server\.prototype\.close/],
    ["const kysely = createRequire(import.meta.url)('kysely');", /requires kysely/],
    ["const require = createRequire(import.meta.url);\nconst k = require('kysely');", /requires kysely/],
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
    'this._cache = new Map();',
    'function f(..._rest: unknown[]) {}',
    "const pg = () => createRequire(import.meta.url)('pg');",
    "const prom = createRequire(import.meta.url)('prom-client');",
    "const builtin = require('node:fs');",
    'Object.prototype.hasOwnProperty.call(o, key);',
  ])('accepts %s', (source) => {
    expect(violations(source, 'example.ts')).toEqual([]);
  });
});
