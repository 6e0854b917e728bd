// List parameters the spec does not allow: each answers 422 naming the parameter, located in the query.
import { describe, expect, it } from 'vitest';
import { serverForFile } from '../support/file-server.js';
import { fieldsOf } from '../support/problems.js';
import { getRaw, resources, storeAll } from './fixtures.js';

const { server, account: alice } = await serverForFile();
for (const resource of resources) await storeAll(resource, alice, [`param-${resource.resource}`]);

const INVALID = [
  { query: 'per_page=7', field: 'per_page' },
  { query: 'per_page=0', field: 'per_page' },
  { query: 'per_page=abc', field: 'per_page' },
  { query: 'page=0', field: 'page' },
  { query: 'page=-1', field: 'page' },
  { query: 'page=1.5', field: 'page' },
  { query: 'page=abc', field: 'page' },
  { query: 'page=9007199254740992', field: 'page' },
  { query: 'sort=up', field: 'sort' },
  { query: 'sort_by=color', field: 'sort_by' },
  { query: 'sort_by=created_at', field: 'sort_by' },
  { query: 'search_by=id', field: 'search_by' },
  { query: `search=${'a'.repeat(256)}`, field: 'search', label: 'a 256-character search' },
  { query: 'foo=1', field: 'foo' },
  { query: 'PAGE=1', field: 'PAGE' },
];

describe.each(resources)('$resource list parameters', (resource) => {
  it.each(INVALID.map((c) => ({ label: c.query, ...c })))(
    'rejects $label with 422 naming $field',
    async ({ query, field }) => {
      const { status, body } = await getRaw(server, alice, `${resource.path}?${query}`);
      expect(status).toBe(422);
      expect(body.type).toBe('/problems/validation');
      expect(fieldsOf(body)).toEqual([`query:${field}`]);
    },
  );

  it('names every bad parameter of one request', async () => {
    const { status, body } = await getRaw(
      server,
      alice,
      `${resource.path}?per_page=7&page=0&sort=up&sort_by=color&search_by=id&foo=1&bar=2`,
    );
    expect(status).toBe(422);
    expect(fieldsOf(body)).toEqual([
      'query:bar',
      'query:foo',
      'query:page',
      'query:per_page',
      'query:search_by',
      'query:sort',
      'query:sort_by',
    ]);
  });

  it('names a bad parameter sent beside good ones, and only it', async () => {
    const { status, body } = await getRaw(server, alice, `${resource.path}?search=param&sort=asc&per_page=25&page=0`);
    expect(status).toBe(422);
    expect(fieldsOf(body)).toEqual(['query:page']);
  });

  it.each([
    ['sort=asc', 'sort=asc'],
    ['sort=desc', 'sort=desc'],
    ['sort_by=id', 'sort_by=id'],
    ['sort_by=name', 'sort_by=name'],
    ['search_by=name', 'search_by=name'],
    ['page=1', 'page=1'],
    ['per_page=25', 'per_page=25'],
    ['an empty search', 'search='],
    ['a space in search written as +', 'search=two+words'],
    ['a 255-character search', `search=${'a'.repeat(255)}`],
  ])('accepts %s', async (_label, query) => {
    const { status } = await getRaw(server, alice, `${resource.path}?${query}`);
    expect(status).toBe(200);
  });
});
