// Integers sent as text: one spelling, a range compared as text, never through a lossy number.
import { describe, expect, it } from 'vitest';
import { integerParameterProblem, readFormInteger } from '../../server/http/validation/integers.js';

const PAGE = { minimum: 1, maximum: undefined };
const COLOR = { minimum: 1, maximum: 6 };
const PER_PAGE = { minimum: undefined, maximum: undefined, allowed: [10, 25, 50, 100] };

describe('integerParameterProblem', () => {
  it.each(['1', '42', '9007199254740991'])('accepts %s as a page', (text) => {
    expect(integerParameterProblem(text, PAGE)).toBeUndefined();
  });

  it.each(['01', '+1', '1e3', '1.0', ' 1', '0x10', '', '-'])('refuses the spelling %j', (text) => {
    expect(integerParameterProblem(text, PAGE)).toMatch(/integer/);
  });

  it.each(['0', '-1', '9007199254740992', '9'.repeat(400)])('refuses %s as out of range', (text) => {
    expect(integerParameterProblem(text.slice(0, 400), PAGE)).toBeDefined();
  });

  it.each([
    ['25', undefined],
    ['11', /10, 25, 50/],
    ['7', /10, 25, 50/],
  ])('per_page %s', (text, expected) => {
    const problem = integerParameterProblem(text, PER_PAGE);
    if (expected) expect(problem).toMatch(expected);
    else expect(problem).toBeUndefined();
  });
});

describe('readFormInteger', () => {
  it.each([
    ['3', { value: 3 }],
    ['6', { value: 6 }],
  ])('reads color %s', (text, expected) => {
    expect(readFormInteger(text, COLOR)).toEqual(expected);
  });

  it('keeps a spelling it does not accept as text, for the validator to refuse', () => {
    expect(readFormInteger('03', COLOR)).toEqual({});
  });

  it.each(['0', '7', '99999999999999999999999'])('names the range for %s', (text) => {
    const read = readFormInteger(text, COLOR);
    expect(read).not.toHaveProperty('value');
    expect((read as { problem?: string }).problem).toMatch(/1.*6/);
  });
});
