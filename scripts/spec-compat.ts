// npm run lint:compat (part of npm run lint): the breaking-change gate. `redocly diff` rates every change
// between the last released spec (spec/released/openapi.yaml) and this one (generated/openapi.yaml) by the
// semantic-version bump it needs; a major change fails unless info.version is a new major. Its stylish report
// is printed when the gate fails, so the reason is on the screen. Both documents are first given their root `security`
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
  property?: string;
  impact: string;
  kind: string;
  verdicts?: Array<{ ruleId?: string; message?: string }>;
  base?: { value?: unknown; pointer?: string };
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

/** The event types of a document's `webhooks` section. */
export function webhookTypes(text: string): string[] {
  return Object.keys((parse(text) as { webhooks?: Record<string, unknown> }).webhooks ?? {});
}

/**
 * Whether a change only adds event types that the revision's `webhooks` section adds: the contract promises new
 * types within v1 ("ignore a type you do not know", event-type.yaml), so a new value in an enum of event types,
 * or a new event shape in the `oneOf` of events, breaks no client. `redocly diff` rates both major.
 */
export function isEventTypeAdded(change: DiffChange, addedTypes: string[]): boolean {
  if (addedTypes.length === 0) return false;
  const rules = (change.verdicts ?? []).map((v) => v.ruleId);
  const before = change.base?.value;
  const after = change.revision?.value;
  if (change.kind === 'modified' && rules.every((rule) => rule === 'enum-values-added')) {
    if (!Array.isArray(before) || !Array.isArray(after)) return false;
    const added = after.filter((value) => !before.includes(value));
    return before.every((value) => after.includes(value)) && added.every((value) => addedTypes.includes(value));
  }
  if (change.kind === 'added' && rules.every((rule) => rule === 'schema-combinator-changed')) {
    const type = (after as { properties?: { type?: { const?: unknown } } } | undefined)?.properties?.type?.const;
    return typeof type === 'string' && addedTypes.includes(type);
  }
  return false;
}

/**
 * Whether a change only lets a request parameter carry reserved characters as they are (`allowReserved: true`,
 * e.g. the commas of `status=pending,active`): the server accepts what it accepted before, percent-encoded, and
 * more. `redocly diff` rates any change of a parameter's serialization major.
 */
export function isReservedAllowed(change: DiffChange & { property?: string }): boolean {
  const rules = (change.verdicts ?? []).map((v) => v.ruleId);
  return (
    change.kind === 'modified' &&
    change.property === 'allowReserved' &&
    change.revision?.value === true &&
    change.base?.value !== true &&
    /\/parameters\/\d+$/.test(change.path) &&
    !/\/responses\//.test(change.path) &&
    rules.every((rule) => rule === 'parameter-serialization-changed')
  );
}

/** The node at a JSON pointer (`#/components/schemas/x`) of a parsed document, following `$ref`s on the way. */
function nodeAt(document: unknown, pointer: string): unknown {
  const parts = pointer
    .replace(/^#\/?/, '')
    .split('/')
    .filter((part) => part !== '');
  let node = document;
  for (const part of parts) {
    const ref = (node as { $ref?: unknown } | undefined)?.$ref;
    if (typeof ref === 'string') node = nodeAt(document, ref);
    node = (node as Record<string, unknown> | undefined)?.[part.replaceAll('~1', '/').replaceAll('~0', '~')];
  }
  const ref = (node as { $ref?: unknown } | undefined)?.$ref;
  return typeof ref === 'string' ? nodeAt(document, ref) : node;
}

/**
 * Whether a change only makes a request parameter's enum a pattern (and a maxLength) that every value of the enum
 * still meets (`status=active` as before, and now `status=pending,active`): what the server accepted, it still
 * does. `redocly diff` rates each added constraint major on its own; the enum's removal beside it is minor.
 */
export function isEnumWidenedToPattern(change: DiffChange, released: unknown): boolean {
  const rules = (change.verdicts ?? []).map((v) => v.ruleId);
  const limit = change.revision?.value;
  const meets =
    change.property === 'pattern' && typeof limit === 'string'
      ? (value: string) => new RegExp(limit, 'u').test(value)
      : change.property === 'maxLength' && typeof limit === 'number'
        ? (value: string) => value.length <= limit
        : undefined;
  if (!meets || /\/responses\//.test(change.path)) return false;
  if (!/\/parameters\/\d+\/schema$/.test(change.path) || !rules.every((rule) => rule === 'schema-constraint-changed')) {
    return false;
  }
  const before = change.base?.pointer ? nodeAt(released, change.base.pointer) : undefined;
  const values = (before as { enum?: unknown } | undefined)?.enum;
  if (!Array.isArray(values) || values.length === 0) return false;
  return values.every((value) => typeof value === 'string' && meets(value));
}

/** The report with the changes the gate rates differently from `redocly diff` (above) counted as minor. */
export function rated(
  report: DiffReport,
  narrowings: SecurityNarrowing[] = [],
  addedTypes: string[] = [],
  released: unknown = {},
): DiffReport & { scopesDeclared: number; narrowed: number } {
  const majors = report.changes.filter((c) => c.impact === 'major');
  const declared = majors.filter((c) => isScopeDeclaredOnOpenRequirement(c));
  const narrowed = majors.filter((c) => !declared.includes(c) && isListedNarrowing(c, narrowings));
  const typesAdded = majors.filter(
    (c) => !declared.includes(c) && !narrowed.includes(c) && isEventTypeAdded(c, addedTypes),
  );
  const widened = majors.filter(
    (c) =>
      !declared.includes(c) &&
      !narrowed.includes(c) &&
      !typesAdded.includes(c) &&
      (isReservedAllowed(c) || isEnumWidenedToPattern(c, released)),
  );
  const relaxed = [...declared, ...narrowed, ...typesAdded, ...widened];
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
    const releasedTypes = webhookTypes(readFileSync(released, 'utf8'));
    const addedTypes = webhookTypes(readFileSync(current, 'utf8')).filter((type) => !releasedTypes.includes(type));
    const report = rated(
      JSON.parse(readFileSync(json, 'utf8')) as DiffReport,
      listedNarrowings(),
      addedTypes,
      parse(readFileSync(base, 'utf8')),
    );
    const problem = verdict(report);
    const { major: majors, minor, patch } = report.summary;
    if (problem) {
      // The readable report, for a failure only: a second run of redocly diff costs seconds.
      const stylish = spawnSync(redocly, ['diff', base, revision, '--fail-on', 'none'], { cwd: root, env: ENV });
      log(stylish.stdout.toString().trim());
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
