// flatten() merges an allOf into one schema as the conformance runner and the field messages read it: each part's
// properties, and every part's required fields (allOf: each part must hold), whatever the order or the nesting.
import { describe, expect, it } from 'vitest';
import { flatten } from '../../server/spec-model.js';

describe('flatten', () => {
  it.each([
    ['two parts, each with its own', { allOf: [{ required: ['a'] }, { required: ['b'] }] }, ['a', 'b']],
    ['the outer schema and a part', { required: ['a'], allOf: [{ required: ['b'] }] }, ['a', 'b']],
    ['a name in both, once', { allOf: [{ required: ['a', 'b'] }, { required: ['b', 'c'] }] }, ['a', 'b', 'c']],
    [
      'a nested allOf',
      { allOf: [{ allOf: [{ required: ['a'] }, { required: ['b'] }] }, { required: ['c'] }] },
      ['a', 'b', 'c'],
    ],
    ['a part without', { allOf: [{ required: ['a'] }, { properties: { b: {} } }] }, ['a']],
  ])('keeps every required field of %s', (_name, schema, required) => {
    expect(flatten(schema).required).toEqual(required);
  });

  it('says nothing of required when no part does', () => {
    expect(flatten({ allOf: [{ properties: { a: {} } }, { properties: { b: {} } }] })).not.toHaveProperty('required');
  });

  it('merges the properties of every part, the later part winning a name', () => {
    const flat = flatten({
      allOf: [{ properties: { a: { type: 'string' }, b: {} } }, { properties: { a: { type: 'integer' } } }],
    });
    expect(flat.properties).toEqual({ a: { type: 'integer' }, b: {} });
  });

  it('leaves a schema without allOf as it is', () => {
    const schema = { type: 'object', required: ['a'] };
    expect(flatten(schema)).toBe(schema);
  });
});
