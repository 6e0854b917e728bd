// The problem catalog (server/http/problems/problem-catalog.ts) against the guide's "Problem types" table
// (spec/openapi.yaml's description, served in /docs): every kind documented with its status, every documented
// kind in the catalog. A throw site names a kind of the catalog, which the compiler holds.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { HttpProblem, problemBody } from '../../server/http/problems/problem.js';
import { anchorOf, PROBLEM_TYPE_BASE, PROBLEMS, type ProblemKind } from '../../server/http/problems/problem-catalog.js';

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
