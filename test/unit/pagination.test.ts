// The list envelope's links and meta (by page number and by cursor walk) and the list parameters as the
// repositories take them, as tables.
import { describe, expect, it } from 'vitest';
import { decodeCursor } from '../../server/http/conventions/cursor.js';
import { type ListRequest, listQueryOf, paginationOf } from '../../server/http/conventions/pagination.js';
import { HttpProblem } from '../../server/http/problems/problem.js';

const PATH = '/api/v1/spaces';
/** The cursors in links as they are (sealing is cursor.ts's, tested there). */
const seal = (cursor: string) => cursor;
const byPage = (page: number, perPage = 10): ListRequest => ({ search: '', sortBy: 'id', sort: 'asc', perPage, page });

describe('pages by number', () => {
  it.each([
    // page, total, on the page → current, last, from, to, prev, next
    [1, 25, 10, 1, 3, 1, 10, null, 2],
    [2, 25, 10, 2, 3, 11, 20, 1, 3],
    [3, 25, 5, 3, 3, 21, 25, 2, null],
    [1, 0, 0, 1, 1, null, null, null, null],
    [1, 10, 10, 1, 1, 1, 10, null, null],
    // Past the end: nothing on it, prev leads back to the last page that has records.
    [7, 25, 0, 7, 3, null, null, 3, null],
  ])('page %i of %i records (%i on it)', (page, total, onPage, current, last, from, to, prev, next) => {
    const sent = { page: String(page) };
    const { links, meta } = paginationOf({ path: PATH, sent, seal }, byPage(page), { total, onPage });
    expect(meta).toEqual({ current_page: current, last_page: last, per_page: 10, total, from, to });
    expect(links).toEqual({
      first: `${PATH}?page=1`,
      last: `${PATH}?page=${last}`,
      prev: prev === null ? null : `${PATH}?page=${prev}`,
      next: next === null ? null : `${PATH}?page=${next}`,
    });
  });

  it('keeps the other parameters in every link, a space as %20', () => {
    const sent = { search: 'a b&c', per_page: '10', page: '2' };
    const { links } = paginationOf({ path: PATH, sent, seal }, byPage(2), { total: 30, onPage: 10 });
    expect(links.next).toBe(`${PATH}?search=a%20b%26c&per_page=10&page=3`);
    expect(links.first).toBe(`${PATH}?search=a%20b%26c&per_page=10&page=1`);
  });

  it('marks a lower-bound total and counts only what the page holds', () => {
    const { meta } = paginationOf({ path: PATH, sent: {}, seal }, byPage(1), {
      total: 5001,
      totalExact: false,
      onPage: 10,
    });
    expect(meta).toMatchObject({ total: 5001, total_exact: false, from: 1, to: 10, last_page: 501 });
  });
});

describe('a cursor walk', () => {
  const walk = (walked: number): ListRequest => ({ ...byPage(1), after: 'start', walked });

  it('starts with after= and links the next page by a cursor that carries the walk', () => {
    const next = { id: 10, nameKey: '' };
    const { links, meta } = paginationOf({ path: PATH, sent: { after: '' }, seal }, walk(0), {
      total: 25,
      onPage: 10,
      next,
    });
    expect(meta).toMatchObject({ current_page: 1, last_page: 3, from: 1, to: 10 });
    expect(links.first).toBe(`${PATH}?after=`);
    const cursor = new URL(links.next ?? '', 'http://x').searchParams.get('after') ?? '';
    expect(decodeCursor(cursor, { sortBy: 'id', sort: 'asc' })).toEqual({ walked: 10, position: next });
  });

  it('ends with no next link', () => {
    const { links, meta } = paginationOf({ path: PATH, sent: {}, seal }, walk(20), { total: 25, onPage: 5 });
    expect(links.next).toBeNull();
    expect(meta).toMatchObject({ current_page: 3, from: 21, to: 25 });
  });

  it('raises a lower-bound total to what the walk has seen, plus one while more follow', () => {
    const next = { id: 90, nameKey: '' };
    const result = { total: 5001, totalExact: false, onPage: 10, next };
    const { meta } = paginationOf({ path: PATH, sent: {}, seal }, walk(6000), result);
    expect(meta).toMatchObject({ total: 6011, total_exact: false, from: 6001, to: 6010 });
  });
});

describe('list parameters', () => {
  const query = { search: 'x', sort_by: 'name', sort: 'desc', per_page: 25, page: 2 } as const;

  it('reads a page request', () => {
    expect(listQueryOf(query)).toEqual({ search: 'x', sortBy: 'name', sort: 'desc', perPage: 25, page: 2 });
  });

  it('starts a walk on an empty cursor', () => {
    expect(listQueryOf({ ...query, after: '' })).toMatchObject({ after: 'start', walked: 0 });
  });

  it('refuses a cursor sent with a page, naming both', () => {
    let thrown: unknown;
    try {
      listQueryOf({ ...query, after: '' }, { page: '2', after: '' });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(HttpProblem);
    expect((thrown as HttpProblem).kind).toBe('page-with-cursor');
    const fields = JSON.stringify((thrown as HttpProblem).extra);
    expect(fields).toMatch(/"field":"page"/);
    expect(fields).toMatch(/"field":"after"/);
  });
});
