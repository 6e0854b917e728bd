// Conditional requests (RFC 9110 §13) and list cursors, as tables.
import { describe, expect, it } from 'vitest';
import { etagOf, noneMatch, readIfMatch } from '../../server/http/conventions/conditional.js';
import { decodeCursor, encodeCursor } from '../../server/http/conventions/cursor.js';
import { HttpProblem } from '../../server/http/problems/problem.js';

describe('If-None-Match', () => {
  const etag = etagOf(7, 3);
  it.each([
    ['"7.3"', true],
    ['W/"7.3"', true],
    ['"7.2", "7.3"', true],
    ['*', true],
    ['"7.2"', false],
    ['"8.3"', false],
    ['7.3', false],
    ['garbage, "7.3"', false],
    ['', false],
  ])('%j matches "7.3": %s', (header, expected) => {
    expect(noneMatch(header, etag)).toBe(expected);
  });

  it('is no condition when absent', () => {
    expect(noneMatch(undefined, etag)).toBe(false);
  });
});

describe('If-Match', () => {
  it.each([
    [undefined, 'any'],
    ['*', 'any'],
    ['"7.3"', [3]],
    ['"7.3", "7.4"', [3, 4]],
    ['W/"7.3"', []],
    ['"8.3"', []],
    ['"7.0"', []],
    ['"7.x"', []],
    ['"a,b", "7.3"', [3]],
    [' "7.3" ,, "7.4" ', [3, 4]],
    ['W/"7.3", "7.5"', [5]],
  ])('%j for record 7 accepts %j', (header, expected) => {
    expect(readIfMatch(header, 7)).toEqual(expected);
  });

  it.each([
    'garbage',
    '7.3',
    '"7.3',
    '"7.3" "7.4"',
    '"7.3", garbage',
    '"7.3";',
    'w/"7.3"',
    '',
    ' , ',
    '*, "7.3"',
    `${' '.repeat(4000)}x`,
  ])('%j is a 422 naming the If-Match header, not a 412', (header) => {
    const read = readIfMatch(header, 7);
    expect(read).toBeInstanceOf(HttpProblem);
    const problem = read as HttpProblem;
    expect(problem.kind).toBe('invalid-if-match');
    expect(problem.extra.errors).toEqual([expect.objectContaining({ location: 'header', field: 'If-Match' })]);
  });
});

describe('cursors', () => {
  const byName = { sortBy: 'name', sort: 'asc' } as const;
  const byId = { sortBy: 'id', sort: 'desc' } as const;

  it.each([
    [byName, { walked: 50, position: { id: 9, nameKey: 'marketing' } }],
    [byId, { walked: 0, position: { id: 1, nameKey: '' } }],
  ])('round-trips a walk point', (sorting, point) => {
    expect(decodeCursor(encodeCursor(sorting, point), sorting)).toEqual(point);
  });

  it.each([
    ['not base64 json', /not a cursor this service made/],
    [Buffer.from('[]').toString('base64url'), /not a cursor this service made/],
    [Buffer.from('["id","desc",-1,1]').toString('base64url'), /not a cursor this service made/],
    [Buffer.from('["id","desc",0,0]').toString('base64url'), /not a cursor this service made/],
    [Buffer.from('["id","asc",0,1]').toString('base64url'), /sort_by=id&sort=asc/],
  ])('refuses %s with a 422 naming after, of the kind naming why', (cursor, message) => {
    let thrown: unknown;
    try {
      decodeCursor(cursor, byId);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(HttpProblem);
    const problem = thrown as HttpProblem;
    expect(problem.kind).toBe(String(message).includes('sort_by') ? 'cursor-sort-mismatch' : 'invalid-cursor');
    expect(JSON.stringify(problem.extra)).toMatch(/"after"/);
    expect(JSON.stringify(problem.extra)).toMatch(message);
  });
});
