// created_readable's other half: a record read back must hold what the create sent, not only what the create
// answered (a stateless mock answers both with the same example). A server may normalise a value (case, white
// space, a trailing dot or slash, punycode, an empty value as null), so values are compared in a canonical form.
import { domainToASCII } from 'node:url';
import type { Difference } from './diff.js';

function canonical(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const text = value.trim();
  if (text === '') return null;
  if (/^https?:\/\//i.test(text)) {
    try {
      return new URL(text).href.toLowerCase();
    } catch {
      return text.toLowerCase();
    }
  }
  const name = text.replace(/\.$/, '');
  if (/^[^\s/]+\.[^\s/]+$/u.test(name)) return (domainToASCII(name) || name).toLowerCase();
  return text.toLowerCase();
}

/** True when `stored` is `sent`, as a server may have normalised it. */
export function sameValue(sent: unknown, stored: unknown): boolean {
  if (typeof sent === 'string' && typeof stored === 'number') return sent.trim() === String(stored);
  return JSON.stringify(canonical(sent)) === JSON.stringify(canonical(stored));
}

/** The sent fields that the record has with another value (fields it does not show are not compared). */
export function unreflected(sent: unknown, record: Record<string, unknown>): Difference[] {
  if (!sent || typeof sent !== 'object' || Array.isArray(sent)) return [];
  return Object.entries(sent as Record<string, unknown>)
    .filter(([field, value]) => field in record && !sameValue(value, record[field]))
    .map(([field, value]) => ({ path: field, expected: value, got: record[field] }));
}
