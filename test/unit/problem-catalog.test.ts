// The problem catalog (server/http/problems/problem-catalog.ts) against the guide's "Problem types" table
// (spec/openapi.yaml's description, served in /docs): every kind documented with its status, every documented
// kind in the catalog. A throw site names a kind of the catalog, which the compiler holds.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { HttpProblem, problemBody } from '../../server/http/problems/problem.js';
import {
  anchorOf,
  PROBLEM_TYPE_BASE,
  PROBLEMS,
  type ProblemKind,
  UNPROCESSABLE_SITES,
} from '../../server/http/problems/problem-catalog.js';

const spec = parse(readFileSync(new URL('../../spec/openapi.yaml', import.meta.url), 'utf8')) as {
  info: { description: string };
};
/** Each row of the table: `| <a id="problem-<kind>"></a>`/problems/<kind>` | `<status>` | what happened |`. */
const ROW = /^\s*\| <a id="([a-z0-9-]+)"><\/a>\x60([^\x60]+)\x60 \| \x60(\d{3})\x60 \|/gm;
const documented = [...spec.info.description.matchAll(ROW)].map(([, anchor, type, status]) => ({
  anchor: anchor as string,
  type: type as string,
  status: Number(status),
}));
const catalog = Object.entries(PROBLEMS) as Array<[ProblemKind, { status: number; title: string }]>;

describe('the problem catalog', () => {
  it('reads the guide table', () => {
    expect(documented.length).toBeGreaterThan(20);
  });

  it.each(catalog)('documents %s with its status under its anchor', (kind, { status }) => {
    expect(documented.find((row) => row.anchor === anchorOf(kind))).toEqual({
      anchor: anchorOf(kind),
      type: `${PROBLEM_TYPE_BASE}${kind}`,
      status,
    });
  });

  it('has every kind the guide documents', () => {
    const kinds = new Set(catalog.map(([kind]) => anchorOf(kind)));
    expect(documented.filter((row) => !kinds.has(row.anchor)).map((row) => row.type)).toEqual([]);
  });

  it('gives a problem the status and title of its kind', () => {
    const body = problemBody(new HttpProblem('invalid-cursor', 'The cursor is not ours.'), 'r-1');
    expect(body).toEqual({
      type: '/problems/invalid-cursor',
      title: 'Unprocessable Content',
      status: 422,
      detail: 'The cursor is not ours.',
      request_id: 'r-1',
    });
  });
});

const ROOT = join(import.meta.dirname, '../..');
const sources = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sources(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );
const is422 = (kind: string) => (PROBLEMS as Record<string, { status: number }>)[kind]?.status === 422;

/** The 422 kinds a source raises: `validationProblem(`, and `fieldProblem('<kind>'` or `new HttpProblem('<kind>'` of a 422 kind. */
function raised422(text: string): string[] {
  const kinds = new Set<string>();
  if (/\bvalidationProblem\(/.test(text)) kinds.add('validation');
  for (const [, kind = ''] of text.matchAll(/\b(?:fieldProblem|new HttpProblem)\(\s*'([a-z-]+)'/g)) {
    if (is422(kind)) kinds.add(kind);
  }
  return [...kinds].sort();
}

describe("the 422's sites", () => {
  // problem.ts defines the helpers the sites call.
  const found = Object.fromEntries(
    sources(join(ROOT, 'server'))
      .map((file) => [relative(ROOT, file), raised422(readFileSync(file, 'utf8'))] as const)
      .filter(([file, kinds]) => kinds.length > 0 && file !== 'server/http/problems/problem.ts'),
  );

  it('lists every file that raises a 422, with the kinds it raises', () => {
    const listed = Object.fromEntries(
      Object.entries(UNPROCESSABLE_SITES).map(([file, { kinds }]) => [file, [...kinds].sort()]),
    );
    expect(found).toEqual(listed);
  });

  it('says why each 422 is raised there', () => {
    for (const { why } of Object.values(UNPROCESSABLE_SITES)) expect(why.length).toBeGreaterThan(20);
  });

  it.each([
    ["throw validationProblem([{ location: 'body', field: 'x', message: 'm' }]);", ['validation']],
    ["fieldProblem('invalid-cursor', errors)", ['invalid-cursor']],
    ["new HttpProblem('unsafe-webhook-url', 'no')", ['unsafe-webhook-url']],
    ["new HttpProblem('not-found', 'gone')", []],
  ])('finds the 422 kinds raised by %s', (text, kinds) => {
    expect(raised422(text)).toEqual(kinds);
  });
});
