// GET /events' filters beside `type`, read from the validated query: the spec's patterns and formats have
// judged their shape; what a format cannot say (a time that does not exist, `until` not after `since`) is
// found here, each finding naming its parameter (the handler answers them with a 422).
import { parseInstant } from '../accounts/key-policy.js';
import type { EventFilters } from './repository.js';

export interface FilterError {
  field: string;
  message: string;
}

interface FilterQuery {
  since?: string;
  until?: string;
  key_id?: string;
  object_id?: string;
  object_type?: string;
}

/** The filters the query gives, or what is wrong with them, by parameter. */
export function eventFilters(query: FilterQuery): Omit<EventFilters, 'type'> | { errors: FilterError[] } {
  const errors: FilterError[] = [];
  const instant = (name: 'since' | 'until'): Date | undefined => {
    const text = query[name];
    if (text === undefined) return undefined;
    // Any past is fine (an hour more than the ten years a key may live ahead, too).
    const ms = parseInstant(text, name, Number.POSITIVE_INFINITY);
    if (typeof ms === 'number') return new Date(ms);
    errors.push({ field: name, message: ms.error });
    return undefined;
  };
  const since = instant('since');
  const until = instant('until');
  if (since && until && until.getTime() <= since.getTime()) {
    errors.push({ field: 'until', message: `until must be later than since (${query.since}).` });
  }
  if (errors.length > 0) return { errors };
  return {
    ...(since ? { since } : {}),
    ...(until ? { until } : {}),
    ...(query.key_id !== undefined ? { keyId: query.key_id } : {}),
    ...(query.object_id !== undefined ? { objectId: query.object_id } : {}),
    ...(query.object_type !== undefined ? { objectType: query.object_type } : {}),
  };
}
