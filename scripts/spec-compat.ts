// npm run lint:compat (part of npm run lint): the breaking-change gate. `redocly diff` rates every change
// between the last released spec (spec/released/openapi.yaml) and this one (generated/openapi.yaml) by the
// semantic-version bump it needs; a major change fails unless info.version is a new major. Its stylish report
// is printed either way, so the reason is on the screen. Both documents are first given their root `security`
// on every operation that inherits it, as `redocly diff` compares operations' own requirements only.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { parse, stringify } from 'yaml';

const root = resolve(import.meta.dirname, '..');
const redocly = join(root, 'node_modules', '.bin', 'redocly');
const ENV = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' };

interface DiffChange {
  path: string;
  impact: string;
  kind: string;
  verdicts?: Array<{ ruleId?: string; message?: string; location?: { pointer?: string } }>;
  base?: { value?: unknown };
  revision?: { value?: unknown };
}

interface DiffReport {
  infoVersions: { base: string; revision: string };
  summary: { major: number; minor: number; patch: number };
  changes: DiffChange[];
}

const SPEC_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** The document with the root `security` written into every operation that has none of its own. */
export function explicitSecurity(text: string): string {
  const document = parse(text) as { security?: unknown; paths?: Record<string, Record<string, unknown>> };
  for (const item of Object.values(document.paths ?? {})) {
    for (const method of SPEC_METHODS) {
      const operation = item[method] as { security?: unknown } | undefined;
      if (operation && operation.security === undefined && document.security !== undefined) {
        operation.security = structuredClone(document.security);
      }
    }
  }
  return stringify(document, { aliasDuplicateObjects: false });
}

/**
 * A scope declared on a requirement that accepted any key (`bearerAuth: []` before) breaks no client: a key
 * issued without scopes holds every scope, and every key issued before scopes existed was issued without them
 * (server/accounts/scopes.ts). `redocly diff` cannot know that and rates it major; the gate rates it minor.
 */
export function isScopeDeclaredOnOpenRequirement(change: DiffChange): boolean {
  const before = change.base?.value;
  const after = change.revision?.value;
  return (
    change.kind === 'modified' &&
    (change.verdicts ?? []).every((v) => v.ruleId === 'security-requirement-changed') &&
    Array.isArray(before) &&
    before.length === 0 &&
    Array.isArray(after) &&
    after.every((scope) => typeof scope === 'string')
  );
}

/** A scope added on purpose to close a hole (spec/released/narrowed-for-security.yaml). */
export interface SecurityNarrowing {
  operation: string;
  scopes: string[];
  why: string;
}

const NARROWINGS_FILE = join(root, 'spec/released/narrowed-for-security.yaml');

/** The narrowings listed in spec/released/narrowed-for-security.yaml. */
export function listedNarrowings(file = NARROWINGS_FILE): SecurityNarrowing[] {
  return existsSync(file) ? ((parse(readFileSync(file, 'utf8')) as SecurityNarrowing[] | null) ?? []) : [];
}

/**
 * Whether a change is one listed narrowing: the operation's requirement gained exactly the listed scopes (the
 * diff's only verdicts are `security-requirement-changed`, and every scope before is still there).
 */
export function isListedNarrowing(change: DiffChange, narrowings: SecurityNarrowing[]): boolean {
  const match = /^#\/paths\/(.+)\/([a-z]+)\/security\/\d+$/.exec(change.path);
  const before = change.base?.value;
  const after = change.revision?.value;
  const [, path, method] = match ?? [];
  if (!path || !method || change.kind !== 'modified' || !Array.isArray(before) || !Array.isArray(after)) return false;
  if (!(change.verdicts ?? []).every((v) => v.ruleId === 'security-requirement-changed')) return false;
  const operation = `${method.toUpperCase()} ${path.replaceAll('~1', '/').replaceAll('~0', '~')}`;
  const added = after.filter((scope) => !before.includes(scope));
  return narrowings.some(
    (n) =>
      n.operation === operation &&
      before.every((scope) => after.includes(scope)) &&
      added.length === n.scopes.length &&
      n.scopes.every((scope) => added.includes(scope)),
  );
}

/**
 * Whether a change only grows a set the contract declares open (`x-open-set: true` on a component schema, as the
 * event types are: "new types may be added within v1: ignore a type you do not know"): values added to its enum
 * (or its items' enum) or a branch added to its `oneOf`. `redocly diff` rates these major in a response; a client
 * that follows the contract ignores what it does not know, so the gate rates them minor.
 */
export function isOpenSetGrowth(change: DiffChange, openSets: readonly string[]): boolean {
  const verdicts = change.verdicts ?? [];
  return (
    verdicts.length > 0 &&
    verdicts.every((v) => {
      const [, name, rest = ''] = /^#\/components\/schemas\/([^/]+)\/(.*)$/.exec(v.location?.pointer ?? '') ?? [];
      if (!name || !openSets.includes(name)) return false;
      if (v.ruleId === 'enum-values-added') return change.kind === 'modified' && /^(items\/)?enum$/.test(rest);
      return v.ruleId === 'schema-combinator-changed' && change.kind === 'added' && /^oneOf\/\d+$/.test(rest);
    })
  );
}

/** The component schemas of a document that declare themselves open sets (`x-open-set: true`). */
export function openSetsOf(text: string): string[] {
  const document = parse(text) as { components?: { schemas?: Record<string, Record<string, unknown>> } };
  return Object.entries(document.components?.schemas ?? {})
    .filter(([, schema]) => schema['x-open-set'] === true)
    .map(([name]) => name);
}

/** The report with the changes the gate rates differently from `redocly diff` (above) counted as minor. */
export function rated(
  report: DiffReport,
  narrowings: SecurityNarrowing[] = [],
  openSets: readonly string[] = [],
): DiffReport & { scopesDeclared: number; narrowed: number } {
  const majors = report.changes.filter((c) => c.impact === 'major');
  const declared = majors.filter((c) => isScopeDeclaredOnOpenRequirement(c));
  const narrowed = majors.filter((c) => !declared.includes(c) && isListedNarrowing(c, narrowings));
  const grown = majors.filter((c) => !declared.includes(c) && !narrowed.includes(c) && isOpenSetGrowth(c, openSets));
  const relaxed = [...declared, ...narrowed, ...grown];
  const { major, minor, patch } = report.summary;
  return {
    ...report,
    summary: { major: major - relaxed.length, minor: minor + relaxed.length, patch },
    changes: report.changes.map((c) => (relaxed.includes(c) ? { ...c, impact: 'minor' } : c)),
    scopesDeclared: declared.length,
    narrowed: narrowed.length,
  };
}

const major = (version: string) => Number(/^(\d+)\./.exec(version)?.[1] ?? Number.NaN);

/** The gate's verdict on a diff: undefined when it passes, else why not. */
export function verdict(report: DiffReport): string | undefined {
  const { base, revision } = report.infoVersions;
  if (report.summary.major === 0) return undefined;
  if (major(revision) > major(base)) return undefined;
  return (
    `${report.summary.major} breaking change(s) since the released ${base}, and info.version ${revision} is not a ` +
    `new major version. Make the change additive, or release it as ${major(base) + 1}.0.0 (served as a new ` +
    'major path, with the old one deprecated first: see the versioning policy in spec/GUIDE.md).'
  );
}

/** Compares two spec files; returns the exit code (0 passes) after printing the report. */
export function checkCompatibility(released: string, current: string, log = console.log): number {
  const dir = mkdtempSync(join(tmpdir(), 'dss-compat-'));
  try {
    const json = join(dir, 'diff.json');
    const base = join(dir, 'released.yaml');
    const revision = join(dir, 'current.yaml');
    writeFileSync(base, explicitSecurity(readFileSync(released, 'utf8')));
    writeFileSync(revision, explicitSecurity(readFileSync(current, 'utf8')));
    execFileSync(redocly, ['diff', base, revision, '--format', 'json', '--fail-on', 'none', '-o', json], {
      cwd: root,
      env: ENV,
      stdio: 'pipe',
    });
    const report = rated(
      JSON.parse(readFileSync(json, 'utf8')) as DiffReport,
      listedNarrowings(),
      openSetsOf(readFileSync(current, 'utf8')),
    );
    const stylish = spawnSync(redocly, ['diff', base, revision, '--fail-on', 'none'], { cwd: root, env: ENV });
    const shown = stylish.stdout.toString().trim();
    const problem = verdict(report);
    const { major: majors, minor, patch } = report.summary;
    if (problem) {
      log(shown);
      log(`\nBreaking-change gate: FAILED. ${problem}`);
      return 1;
    }
    log(
      `Breaking-change gate: ${relative(root, current)} (${report.infoVersions.revision}) against the released ` +
        `${report.infoVersions.base}: ${majors} major, ${minor} minor, ${patch} patch changes` +
        (report.scopesDeclared > 0
          ? ` (${report.scopesDeclared} of the minor: a scope declared where any key was accepted).`
          : '.') +
        (report.narrowed > 0
          ? ` ${report.narrowed} narrowed for security, as spec/released/narrowed-for-security.yaml lists.`
          : '') +
        ' Passed.',
    );
    return 0;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] === import.meta.filename) {
  const [released = 'spec/released/openapi.yaml', current = 'generated/openapi.yaml'] = process.argv.slice(2);
  process.exitCode = checkCompatibility(released, current);
}
