// The account's API keys (/api-keys), as the registry (server/resources.ts) lists them.

import { nameProblem } from '../cli/terminal-text.js';
import type { EventSubscriber } from '../events/outbox.js';
import type { FieldFormat } from '../formats.js';
import { idCursorFormats } from '../http/conventions/id-cursor.js';
import type { ApiModule } from '../resource.js';
import { type ApiKeyOperation, apiKeyHandlers } from './handlers.js';
import { parseDuration, parseInstant, parseRange } from './key-policy.js';

const errorOf = <T>(result: T | { error: string }) =>
  typeof result === 'object' && result !== null && 'error' in result ? result.error : undefined;

/** The key fields' formats (spec/components/schemas/api-key-store.yaml), by key-policy.ts's rules. */
const keyFormats: Record<string, FieldFormat> = {
  'ip-range': {
    validate: (value) => errorOf(parseRange(value)) === undefined,
    message: 'must be an IPv4 or IPv6 address or range, as 10.0.0.0/8 or 2001:db8::/32',
    hint: (value) => errorOf(parseRange(value)),
  },
  'key-expiry': {
    validate: (value) => {
      const ms = parseInstant(value, 'expires_at');
      return typeof ms === 'number' && ms > Date.now();
    },
    message: 'must be a date and time with its zone, in the future and at most 10 years ahead',
    hint: (value) => errorOf(parseInstant(value, 'expires_at')),
  },
  'key-overlap': {
    validate: (value) => errorOf(parseDuration(value, 'overlap')) === undefined,
    message: 'must be a whole number and a unit (s, m, h, d, w) of at most 10 years, as 24h',
  },
  'key-label': {
    validate: (value) => nameProblem(value) === undefined,
    message: 'must hold no control, invisible, space-like or line-separator characters, in Unicode NFC',
    hint: (value) => {
      const problem = nameProblem(value);
      return problem && `label ${problem}`;
    },
  },
};

export const apiKeys: ApiModule<'api-keys', ApiKeyOperation, { fanOut: EventSubscriber }> = {
  name: 'api-keys',
  formats: { ...idCursorFormats, ...keyFormats },
  handlers: (db, { fanOut }) => apiKeyHandlers(db, fanOut),
};
