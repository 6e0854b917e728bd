// The breaking-change gate's one deliberate allowance for a narrowing (scripts/spec-compat.ts): a scope added to
// an operation's requirement passes only when spec/released/narrowed-for-security.yaml lists exactly it.
import { describe, expect, it } from 'vitest';
import {
  isEnumWidenedToPattern,
  isEventTypeAdded,
  isListedNarrowing,
  isReservedAllowed,
  listedNarrowings,
  rated,
  type SecurityNarrowing,
} from '../../scripts/spec-compat.js';

const LISTED: SecurityNarrowing[] = [
  { operation: 'POST /events/{id}/redeliver', scopes: ['events:read'], why: 'closes a hole' },
];

const change = (path: string, before: unknown, after: unknown, ruleId = 'security-requirement-changed') => ({
  path,
  kind: 'modified',
  impact: 'major',
  verdicts: [{ ruleId }],
  base: { value: before },
  revision: { value: after },
});

const REDELIVER = '#/paths/~1events~1{id}~1redeliver/post/security/0';

const cases: Array<[string, ReturnType<typeof change>, boolean]> = [
  ['the listed scope added', change(REDELIVER, ['webhooks:write'], ['webhooks:write', 'events:read']), true],
  [
    'the listed scope and another',
    change(REDELIVER, ['webhooks:write'], ['webhooks:write', 'events:read', 'spaces:read']),
    false,
  ],
  ['a scope taken away as well', change(REDELIVER, ['webhooks:write'], ['events:read']), false],
  ['another scope', change(REDELIVER, ['webhooks:write'], ['webhooks:write', 'spaces:read']), false],
  [
    'the same scope on another operation',
    change('#/paths/~1events/get/security/0', ['webhooks:write'], ['webhooks:write', 'events:read']),
    false,
  ],
  [
    'another method of the path',
    change('#/paths/~1events~1{id}~1redeliver/get/security/0', ['webhooks:write'], ['webhooks:write', 'events:read']),
    false,
  ],
  [
    'a change of another rule',
    change(REDELIVER, ['webhooks:write'], ['webhooks:write', 'events:read'], 'operation-removed'),
    false,
  ],
  ['not a list of scopes', change(REDELIVER, undefined, ['events:read']), false],
];

describe('a listed narrowing', () => {
  it.each(cases)('%s', (_name, given, want) => {
    expect(isListedNarrowing(given, LISTED)).toBe(want);
  });

  it('is counted minor, and nothing else is', () => {
    const report = {
      infoVersions: { base: '1.2.0', revision: '1.2.0' },
      summary: { major: 2, minor: 0, patch: 0 },
      changes: [
        change(REDELIVER, ['webhooks:write'], ['webhooks:write', 'events:read']),
        change(REDELIVER, ['webhooks:write'], ['webhooks:write', 'spaces:read']),
      ],
    };
    const result = rated(report, LISTED);
    expect(result.summary).toEqual({ major: 1, minor: 1, patch: 0 });
    expect(result.narrowed).toBe(1);
  });

  it('the file lists each narrowing with its operation, scopes and reason', () => {
    const listed = listedNarrowings();
    expect(listed.length).toBeGreaterThan(0);
    for (const entry of listed) {
      expect(entry.operation).toMatch(/^(GET|PUT|POST|PATCH|DELETE) \//);
      expect(entry.scopes.length).toBeGreaterThan(0);
      expect(entry.why.length).toBeGreaterThan(20);
    }
  });
});

describe('isEventTypeAdded', () => {
  const ADDED = ['domain.routing_changed'];
  const enumChange = (before: string[], after: string[]) =>
    change('#/paths/~1events/get/x/enum', before, after, 'enum-values-added');
  const shape = (type: string) => ({
    path: '#/paths/~1webhook-endpoints~1{id}~1test/post/x/oneOf/8',
    kind: 'added',
    impact: 'major',
    verdicts: [{ ruleId: 'schema-combinator-changed' }],
    revision: { value: { properties: { type: { const: type } } } },
  });
  it.each([
    ['an event type the webhooks section adds', enumChange(['a.b'], ['a.b', 'domain.routing_changed']), true],
    ['another value', enumChange(['a.b'], ['a.b', 'domain.other']), false],
    ['a value taken away as well', enumChange(['a.b'], ['domain.routing_changed']), false],
    ['the added event shape', shape('domain.routing_changed'), true],
    ['another shape', shape('domain.other'), false],
  ] as const)('%s: %s', (_case, diff, allowed) => {
    expect(isEventTypeAdded(diff, ADDED)).toBe(allowed);
    expect(isEventTypeAdded(diff, [])).toBe(false);
  });
});

describe('isReservedAllowed', () => {
  const serialization = (path: string, before: unknown, after: unknown) => ({
    ...change(path, before, after, 'parameter-serialization-changed'),
    property: 'allowReserved',
  });
  it.each([
    ['set on a request parameter', serialization('#/paths/~1domains/get/parameters/7', undefined, true), true],
    ['taken away', serialization('#/paths/~1domains/get/parameters/7', true, false), false],
    ['on a response header', serialization('#/paths/~1domains/get/responses/200/parameters/1', undefined, true), false],
    [
      'explode changed',
      { ...serialization('#/paths/~1domains/get/parameters/7', undefined, true), property: 'explode' },
      false,
    ],
  ] as const)('%s: %s', (_case, diff, allowed) => {
    expect(isReservedAllowed(diff)).toBe(allowed);
  });
});

describe('isEnumWidenedToPattern', () => {
  const released = {
    components: { schemas: { state: { enum: ['pending', 'active'] } } },
  };
  const pattern = (
    value: string,
    path = '#/paths/~1domains/get/parameters/7/schema',
    pointer = '#/components/schemas/state',
  ) => ({
    path,
    kind: 'modified',
    impact: 'major',
    property: 'pattern',
    verdicts: [{ ruleId: 'schema-constraint-changed' }],
    base: { pointer },
    revision: { value },
  });
  it.each([
    ['a pattern every old value matches', pattern('^(pending|active)(,(pending|active))*$'), true],
    ['a pattern an old value fails', pattern('^(pending)(,(pending))*$'), false],
    ['on a response', pattern('^(pending|active)$', '#/paths/~1domains/get/responses/200/x/schema'), false],
    ['where there was no enum', pattern('^(pending|active)$', undefined, '#/components/schemas/none'), false],
    ['a maxLength every old value fits', { ...pattern('x'), property: 'maxLength', revision: { value: 7 } }, true],
    [
      'a maxLength an old value does not fit',
      { ...pattern('x'), property: 'maxLength', revision: { value: 6 } },
      false,
    ],
  ] as const)('%s: %s', (_case, diff, allowed) => {
    expect(isEnumWidenedToPattern(diff, released)).toBe(allowed);
  });
});
