// The domain state events the guide and the spec list are the ones a check can emit: the statuses a check moves a
// domain into (afterCheck over every state, answer and age; claimed_elsewhere from the move of a name).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  afterCheck,
  DEFAULT_SCHEDULE,
  DOMAIN_STATUSES,
  type ObservationCode,
} from '../../server/domains/check-rules.js';

const ROOT = join(import.meta.dirname, '../..');
const CODES: ObservationCode[] = [
  'found',
  'missing',
  'wrong_value',
  'several_values',
  'lookup_failed',
  'held_elsewhere',
];
const HOUR = 3_600_000;
const AGES = [0, HOUR, 100 * HOUR, 1000 * HOUR];

/** Every status a check moves a domain into (an event is written for each change of status). */
function emittedStatuses(): string[] {
  const now = new Date('2026-11-27T12:00:00.000Z');
  const reached = new Set<string>(['claimed_elsewhere']);
  for (const status of DOMAIN_STATUSES) {
    for (const code of CODES) {
      for (const age of AGES) {
        const outcome = afterCheck({ status, since: new Date(now.getTime() - age) }, code, now, DEFAULT_SCHEDULE);
        if (outcome.status !== status) reached.add(outcome.status);
      }
    }
  }
  return [...reached].sort();
}

/** The `domain.<status>` names in `text`, other than the record events. */
const stateEvents = (text: string) =>
  [...text.matchAll(/`domain\.(\w+)`/g)]
    .map(([, name = '']) => name)
    .filter((name) => !['created', 'updated', 'deleted'].includes(name))
    .sort();

describe('domain state events', () => {
  it('are those a check can emit, and domain.pending is not one', () => {
    expect(emittedStatuses()).toEqual(['active', 'claimed_elsewhere', 'expired', 'misconfigured']);
  });

  it("match the guide's list, which says domain.pending is reserved", () => {
    const guide = readFileSync(join(ROOT, 'spec/GUIDE.md'), 'utf8');
    const section = guide.slice(guide.indexOf('## Events and webhooks'), guide.indexOf('An update that changes'));
    const [listed = '', reserved = ''] = section.split('(`domain.pending` is');
    expect(stateEvents(listed)).toEqual(emittedStatuses());
    expect(reserved).toMatch(/^\s+reserved and not sent/);
  });

  it("match the spec's event-type description", () => {
    const description = readFileSync(join(ROOT, 'spec/components/schemas/event-type.yaml'), 'utf8');
    const states = description.slice(
      description.indexOf("A domain's state:"),
      description.indexOf('`domain.pending` is'),
    );
    expect(stateEvents(states)).toEqual(emittedStatuses());
    expect(description).toMatch(/`domain\.pending` is reserved and not\s+sent/);
  });
});
