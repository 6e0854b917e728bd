// The table of which suite runs in which leg (test/legs.ts): each rule names suites that exist, no suite falls
// under two rules, every suite runs in at least one leg of CI, and the Node.js 24 leg runs only the suites that
// name it.
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { currentLeg, excludedFrom, includedIn, LEG_RULES } from '../legs.js';

const ROOT = join(import.meta.dirname, '../..');
const SUITES = readdirSync(join(ROOT, 'test'), { recursive: true, encoding: 'utf8' })
  .filter((file) => file.endsWith('.test.ts'))
  .map((file) => relative(ROOT, join(ROOT, 'test', file)));

/** The globs the table uses (`**`, `*`, `{a,b}`) as a RegExp over a path from the repository's root. */
function globToRegExp(glob: string): RegExp {
  const source = glob
    .split('**')
    .map((part) =>
      part
        .replace(/[.+^$()|[\]\\]/g, '\\$&')
        .replace(/\*/g, '[^/]*')
        .replace(/\{([^}]*)\}/g, (_, names: string) => `(?:${names.split(',').join('|')})`),
    )
    .join('.*');
  return new RegExp(`^${source}$`);
}

describe('the legs table', () => {
  it.each(LEG_RULES.map((rule) => [rule.suite, rule] as const))('%s names suites that exist', (_, rule) => {
    expect(SUITES.filter((suite) => globToRegExp(rule.suite).test(suite))).not.toEqual([]);
  });

  it('puts no suite under two rules', () => {
    const twice = SUITES.filter((suite) => LEG_RULES.filter((rule) => globToRegExp(rule.suite).test(suite)).length > 1);
    expect(twice).toEqual([]);
  });

  it('runs every suite in at least one leg of CI, and says why where it leaves one out', () => {
    for (const rule of LEG_RULES) {
      expect(
        rule.legs.filter((leg) => leg !== 'quick'),
        rule.suite,
      ).not.toEqual([]);
      expect(rule.why, rule.suite).toMatch(/^[^\n]{10,}$/);
    }
  });

  it.each([
    [{}, 'sqlite'],
    [{ DSS_TEST_DATABASE: 'postgres' }, 'postgres'],
    [{ DSS_TEST_LEG: 'node24' }, 'node24'],
  ] as const)('reads the leg from %j', (env, leg) => {
    expect(currentLeg(env)).toBe(leg);
  });

  it('leaves out of each leg exactly the suites whose rule does not name it', () => {
    expect(excludedFrom('postgres')).toContain('test/deploy/**');
    expect(excludedFrom('sqlite')).toEqual(['test/faults/postgres-*.test.ts', 'test/dns/race-postgres.test.ts']);
    expect(excludedFrom('quick')).toContain('test/conformance/own-server.test.ts');
  });

  it('runs in the Node.js 24 leg only the suites whose rule names it, and every suite in the others', () => {
    const node24 = SUITES.filter((suite) => includedIn('node24').some((glob) => globToRegExp(glob).test(suite)));
    expect(node24).toContain('test/service/startup.test.ts');
    expect(node24).toContain('test/unit/legs.test.ts');
    expect(node24).not.toContain('test/spaces/store.test.ts');
    expect(node24).not.toContain('test/conformance/broken-server.test.ts');
    for (const leg of ['sqlite', 'postgres', 'quick'] as const) expect(includedIn(leg)).toEqual(['test/**/*.test.ts']);
  });
});
