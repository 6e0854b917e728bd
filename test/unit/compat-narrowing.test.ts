// The breaking-change gate's one deliberate allowance for a narrowing (scripts/spec-compat.ts): a scope added to
// an operation's requirement passes only when spec/released/narrowed-for-security.yaml lists exactly it.
import { describe, expect, it } from 'vitest';
import {
  isEventTypeAdded,
  isListedNarrowing,
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

describe('a new event type', () => {
  const TYPES = '#/paths/~1webhook-endpoints/get/responses/200/content/application~1json/schema/properties/x/items';
  const enumChange = (before: string[], after: string[]) => change(TYPES, before, after, 'enum-values-added');
  const shape = (type: string) => ({
    path: '#/paths/~1x/post/responses/202/content/application~1json/schema/properties/data/oneOf/12',
    kind: 'added',
    impact: 'major',
    verdicts: [{ ruleId: 'schema-combinator-changed' }],
    revision: { value: { type: 'object', properties: { type: { const: type } } } },
  });
  it.each([
    ['event types added to an enum', enumChange(['space.created'], ['space.created', 'api_key.created']), true],
    ['another value added to an enum', enumChange(['active'], ['active', 'retired']), false],
    ['an event type added and another removed', enumChange(['a.b', 'c.d'], ['a.b', 'e.f']), false],
    ["an event's shape added to the union", shape('api_key.rotated'), true],
    ['another shape added to a union', { ...shape('x'), revision: { value: { type: 'string' } } }, false],
  ])('%s: %s', (_name, given, relaxed) => {
    expect(isEventTypeAdded(given)).toBe(relaxed);
  });
});
