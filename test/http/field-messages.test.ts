// The words of a 422: each bad field is named with what is allowed, in our words rather than the validator's;
// and a form field left blank is treated as the spec says (an optional integer: not sent; a name: not empty).
import { describe, expect, it } from 'vitest';
import { type Finding, fieldMessage, integerRuleMessage, messageFor } from '../../server/http/field-messages.js';
import { expectProblem } from '../support/problems.js';
import { serverWithRecords } from './fixtures.js';

const { server, alice, auth, ids } = await serverWithRecords();
const FORM = { 'Content-Type': 'application/x-www-form-urlencoded' };

describe('messageFor and fieldMessage', () => {
  const formats = { 'space-name': { validate: () => false, message: 'must be 1–255 characters after trimming' } };
  const finding = (keyword: string, raw: string, value?: unknown): Finding => ({ field: 'f', keyword, raw, value });

  it.each([
    ['enum', 'must be equal to one of the allowed values: desc, asc', 'up', 'must be one of desc, asc'],
    ['enum', 'must be equal to one of the allowed values: name', 'x', 'must be name (the only value allowed)'],
    ['minLength', 'must NOT have fewer than 1 characters', '', 'must not be empty'],
    ['minLength', 'must NOT have fewer than 3 characters', 'ab', 'must be at least 3 characters'],
    ['maxLength', 'must NOT have more than 255 characters', 'x', 'must be at most 255 characters'],
    ['maxLength', 'must NOT have more than 1 characters', 'xy', 'must be at most 1 character'],
    ['type', 'must be integer', '3', 'must be an integer'],
    ['type', 'must be string,null', 3, 'must be a string or null'],
    ['required', "must have required property 'name'", undefined, 'is required'],
    ['pattern', 'must match pattern "^[a-z]+$"', 'A', 'must match the pattern ^[a-z]+$'],
    ['format', 'must match format "space-name"', 'x', 'must be 1–255 characters after trimming'],
  ])('%s: "%s" becomes our words', (keyword, raw, value, expected) => {
    expect(messageFor(finding(keyword, raw, value), { formats })).toBe(expected);
  });

  it('says only "must not be empty" for an empty value, whatever else failed', () => {
    const findings = [
      finding('minLength', 'must NOT have fewer than 1 characters', ''),
      finding('format', 'must match format "space-name"', ''),
    ];
    expect(fieldMessage(findings, { formats })).toBe('must not be empty');
  });

  it('lets a format state the rule that a length limit or a pattern only restates part of', () => {
    const findings = [
      finding('maxLength', 'must NOT have more than 1024 characters', 'x'.repeat(2000)),
      finding('pattern', 'must match pattern "^x$"', 'x'.repeat(2000)),
      finding('format', 'must match format "space-name"', 'x'.repeat(2000)),
    ];
    expect(fieldMessage(findings, { formats })).toBe('must be 1–255 characters after trimming');
  });

  it.each([
    [{ minimum: 1, maximum: 6 }, 'must be an integer from 1 to 6'],
    [{ minimum: 10, maximum: 100, allowed: [10, 25, 50, 100] }, 'must be one of 10, 25, 50, 100'],
    [{ minimum: 1 }, 'must be an integer of at least 1'],
  ])('names the integers a rule allows: %o', (rule, expected) => {
    expect(integerRuleMessage(rule)).toBe(expected);
  });
});

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
