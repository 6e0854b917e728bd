// npm run lint:compat (part of npm run lint): the breaking-change gate. `redocly diff` rates every change
// between the last released spec (spec/released/openapi.yaml) and this one (generated/openapi.yaml) by the
// semantic-version bump it needs; a major change fails unless info.version is a new major. Its stylish report
// is printed either way, so the reason is on the screen.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const redocly = join(root, 'node_modules', '.bin', 'redocly');
const ENV = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' };

interface DiffReport {
  infoVersions: { base: string; revision: string };
  summary: { major: number; minor: number; patch: number };
  changes: Array<{ path: string; impact: string; kind: string; verdicts?: Array<{ message?: string }> }>;
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
    execFileSync(redocly, ['diff', released, current, '--format', 'json', '--fail-on', 'none', '-o', json], {
      cwd: root,
      env: ENV,
      stdio: 'pipe',
    });
    const report = JSON.parse(readFileSync(json, 'utf8')) as DiffReport;
    const stylish = spawnSync(redocly, ['diff', released, current, '--fail-on', 'none'], { cwd: root, env: ENV });
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
        `${report.infoVersions.base}: ${majors} major, ${minor} minor, ${patch} patch changes. Passed.`,
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
