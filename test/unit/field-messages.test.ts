// The words of a 422, rule by rule: each finding (a schema keyword, the field's schema, the value sent) becomes
// our message, naming what is allowed; no validator's message text is read.
import { describe, expect, it } from 'vitest';
import {
  type Finding,
  fieldMessage,
  messageFor,
  unknownParameterMessage,
} from '../../server/http/validation/field-messages.js';
import { integerRuleMessage } from '../../server/http/validation/integers.js';

const formats = {
  'space-name': { validate: () => false, message: 'must be 1–255 characters after trimming' },
  'host-name': {
    validate: () => false,
    message: 'must be a host name',
    hint: (v: string) => (v.startsWith('http') ? 'drop the scheme' : undefined),
  },
};
const finding = (keyword: string, schema: Record<string, unknown>, value?: unknown): Finding => ({
  field: 'f',
  keyword,
  schema,
  value,
});

describe('messageFor', () => {
  it.each([
    ['enum', { type: 'string', enum: ['desc', 'asc'] }, 'up', 'must be one of desc, asc'],
    ['enum', { type: 'string', enum: ['name'] }, 'x', 'must be name (the only value allowed)'],
    ['const', { const: false }, true, 'must be false (the only value allowed)'],
    ['minLength', { type: 'string', minLength: 1 }, '', 'must not be empty'],
    ['minLength', { type: 'string', minLength: 3 }, 'ab', 'must be at least 3 characters'],
    ['maxLength', { type: 'string', maxLength: 255 }, 'x', 'must be at most 255 characters'],
    ['maxLength', { type: 'string', maxLength: 1 }, 'xy', 'must be at most 1 character'],
    ['maxItems', { type: 'array', maxItems: 2 }, [1, 2, 3], 'must have at most 2 items'],
    ['type', { type: 'integer' }, '3', 'must be an integer'],
    ['type', { type: ['string', 'null'] }, 3, 'must be a string or null'],
    ['type', { type: 'object' }, [], 'must be an object'],
    ['required', {}, undefined, 'is required'],
    ['pattern', { type: 'string', pattern: '^[a-z]+$' }, 'A', 'must match the pattern ^[a-z]+$'],
    [
      'pattern',
      { type: 'string', pattern: '^[^\\u0000-\\u001F\\u007F-\\u009F]*$' },
      'a\u0001',
      'must not contain control characters (U+0000–U+001F, U+007F–U+009F)',
    ],
    ['format', { type: 'string', format: 'space-name' }, 'x', 'must be 1–255 characters after trimming'],
    ['format', { type: 'string', format: 'host-name' }, 'http://x', 'drop the scheme'],
    ['format', { type: 'string', format: 'host-name' }, 'a b', 'must be a host name'],
    ['format', { type: 'string', format: 'date-time' }, 'x', 'must be a valid date-time'],
    ['minimum', { type: 'number', minimum: 2 }, 1, 'must be at least 2'],
    ['maximum', { type: 'number', maximum: 9 }, 10, 'must be at most 9'],
    ['uniqueItems', { type: 'array', uniqueItems: true }, [1, 1], 'does not meet the spec\'s "uniqueItems" rule'],
  ])('%s %j with %j', (keyword, schema, value, expected) => {
    expect(messageFor(finding(keyword, schema, value), { formats })).toBe(expected);
  });

  it('names an integer rule by the field rather than by the keyword that failed', () => {
    const integerRule = () => ({ minimum: 1, maximum: 6 });
    expect(messageFor(finding('maximum', { type: 'integer', maximum: 6 }, 9), { formats, integerRule })).toBe(
      'must be an integer from 1 to 6',
    );
  });

  it.each([
    ['id', {}, ['name', 'color'], 'is not a field of this operation; accepted: name, color'],
    ['id', { id: 'is given by the service' }, ['name'], 'is given by the service'],
    ['constructor', {}, ['name'], 'is not a field of this operation; accepted: name'],
  ])('refuses the field %s', (field, rejectedFields, acceptedFields, expected) => {
    const refused = { field, keyword: 'additionalProperties' };
    expect(messageFor(refused, { formats, rejectedFields, acceptedFields })).toBe(expected);
  });
});

describe('fieldMessage', () => {
  it('says only "must not be empty" for an empty value, whatever else failed', () => {
    const findings = [
      finding('minLength', { minLength: 1, format: 'space-name' }, ''),
      finding('format', { minLength: 1, format: 'space-name' }, ''),
    ];
    expect(fieldMessage(findings, { formats })).toBe('must not be empty');
  });

  it('lets a format state the rule that a length limit or a pattern only restates part of', () => {
    const schema = { maxLength: 1024, pattern: '^x$', format: 'space-name' };
    const long = 'x'.repeat(2000);
    const findings = ['maxLength', 'pattern', 'format'].map((keyword) => finding(keyword, schema, long));
    expect(fieldMessage(findings, { formats })).toBe('must be 1–255 characters after trimming');
  });

  it('joins different rules, once each', () => {
    const schema = { type: 'string', maxLength: 3, pattern: '^[a-z]+$' };
    const findings = [
      finding('maxLength', schema, 'ABCD'),
      finding('pattern', schema, 'ABCD'),
      finding('maxLength', schema, 'ABCD'),
    ];
    expect(fieldMessage(findings, { formats })).toBe('must be at most 3 characters; must match the pattern ^[a-z]+$');
  });
});

describe('integerRuleMessage and unknownParameterMessage', () => {
  it.each([
    [{ minimum: 1, maximum: 6 }, 'must be an integer from 1 to 6'],
    [{ minimum: 10, maximum: 100, allowed: [10, 25, 50, 100] }, 'must be one of 10, 25, 50, 100'],
    [{ minimum: 1 }, 'must be an integer of at least 1'],
    [{ maximum: 5 }, 'must be an integer of at most 5'],
  ])('names the integers a rule allows: %o', (rule, expected) => {
    expect(integerRuleMessage(rule)).toBe(expected);
  });

  it.each([
    [['page', 'per_page'], 'is not a parameter of this operation; known: page, per_page'],
    [[], 'is not a parameter of this operation, which takes none'],
  ])('names the known parameters %j', (known, expected) => {
    expect(unknownParameterMessage(known)).toBe(expected);
  });
});
