// The words of a 422 as a client meets them: each bad field is named with what is allowed, in our words rather
// than the validator's; and a form field left blank is treated as the spec says (an optional integer: not sent; a
// name: not empty). The words themselves, rule by rule: test/unit/field-messages.test.ts.
import { describe, expect, it } from 'vitest';
import { expectProblem } from '../support/problems.js';
import { serverWithRecords } from './fixtures.js';

const { server, alice, auth, ids } = await serverWithRecords();
const FORM = { 'Content-Type': 'application/x-www-form-urlencoded' };

describe('422 answers', () => {
  async function errorsOf(response: Response) {
    return ((await expectProblem(response, 422)).errors as Array<{ field: string; message: string }>).map(
      ({ field, message }) => [field, message],
    );
  }

  it('names the allowed values of every bad query parameter', async () => {
    const response = await server.fetch('/api/v1/spaces?per_page=7&sort=up&page=0', { headers: auth() });
    expect(await errorsOf(response)).toEqual([
      ['per_page', 'must be one of 10, 25, 50, 100'],
      ['page', 'must be an integer from 1 to 9007199254740991'],
      ['sort', 'must be one of desc, asc'],
    ]);
  });

  it.each([
    ['a form', FORM, 'name=&color=9'],
    ['JSON', { 'Content-Type': 'application/json' }, '{"name": "", "color": 9}'],
  ])('says plainly that a name is empty and a colour is out of range, in %s', async (_, headers, body) => {
    const response = await server.fetch('/api/v1/spaces', { method: 'POST', headers: { ...auth(), ...headers }, body });
    expect((await errorsOf(response)).sort()).toEqual([
      ['color', 'must be an integer from 1 to 6'],
      ['name', 'must not be empty'],
    ]);
  });
});

describe('a form field left blank', () => {
  it('is an optional integer not sent: a store gets the default colour', async () => {
    const response = await server.fetch('/api/v1/spaces', {
      method: 'POST',
      headers: { ...auth(), ...FORM },
      body: 'name=Blank%20colour&color=',
    });
    expect(response.status).toBe(201);
    expect((await response.json()).data).toMatchObject({ name: 'Blank colour', color: 1 });
  });

  it('is an optional integer not sent: an update leaves the colour as it is', async () => {
    const before = await alice.client.GET('/spaces/{id}', { params: { path: { id: ids.spaces } } });
    const response = await server.fetch(`/api/v1/spaces/${ids.spaces}`, {
      method: 'PATCH',
      headers: { ...auth(), ...FORM },
      body: 'color=',
    });
    expect(response.status).toBe(200);
    expect((await response.json()).data.color).toBe(before.data?.data.color);
  });

  it('is still an empty name, which is refused', async () => {
    const response = await server.fetch(`/api/v1/spaces/${ids.spaces}`, {
      method: 'PATCH',
      headers: { ...auth(), ...FORM },
      body: 'name=',
    });
    const problem = await expectProblem(response, 422);
    expect(problem.errors).toEqual([{ location: 'body', field: 'name', message: 'must not be empty' }]);
  });
});
