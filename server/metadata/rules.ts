// Metadata on records (domains, spaces, webhook endpoints), as Stripe's and Cloudflare's: up to MAX_KEYS keys of
// letters, digits, `_`, `-` and `.`, each with a text value. Set on store and update (an empty value removes a
// key, an update merges), searched by exact key and value. The rules as pure functions; pairs.ts stores them.
import type { FieldError } from '../http/problems/problem.js';

export const MAX_KEYS = 20;
export const MAX_KEY_LENGTH = 40;
export const MAX_VALUE_LENGTH = 500;
const KEY = /^[A-Za-z0-9_.-]{1,40}$/;

export type Metadata = Record<string, string>;

const named = (key: string) => `metadata[${key.length > 60 ? `${key.slice(0, 60)}…` : key}]`;
const isWellFormedText = (text: string) => !text.includes('\u0000') && text.isWellFormed();

/** What is wrong with one key or its value, or undefined. */
function pairProblem(key: string, value: unknown): string | undefined {
  if (!isWellFormedText(key) || !KEY.test(key)) {
    return `is not a metadata key: a key has 1 to ${MAX_KEY_LENGTH} characters, each a letter, a digit, _, - or .`;
  }
  if (typeof value !== 'string') return 'must be a string (an empty string removes the key)';
  if (!isWellFormedText(value)) {
    return 'must not contain U+0000 (NUL) or an unpaired UTF-16 surrogate: the database cannot store them';
  }
  if (value.length > MAX_VALUE_LENGTH) {
    return `must be at most ${MAX_VALUE_LENGTH} characters (this one has ${value.length})`;
  }
  return undefined;
}

/**
 * The errors of a `metadata` field as sent (a JSON object, or a form's `metadata[key]=value` fields gathered into
 * one), each naming `metadata[key]`; none when it is well formed. At most MAX_KEYS keys are sent at once.
 */
export function metadataFindings(sent: unknown, location: FieldError['location'] = 'body'): FieldError[] {
  if (typeof sent !== 'object' || sent === null || Array.isArray(sent)) {
    return [{ location, field: 'metadata', message: 'must be an object of keys and text values' }];
  }
  const entries = Object.entries(sent);
  const errors: FieldError[] = [];
  for (const [key, value] of entries) {
    const message = pairProblem(key, value);
    if (message) errors.push({ location, field: named(key), message });
  }
  if (entries.length > MAX_KEYS) {
    errors.push({
      location,
      field: 'metadata',
      message: `may hold at most ${MAX_KEYS} keys (${entries.length} were sent)`,
    });
  }
  return errors;
}

/** The sent metadata fields of a query (`metadata[key]=value`), as key and value pairs. */
export function metadataOfQuery(sent: Record<string, unknown>): Array<[string, unknown]> {
  return Object.entries(sent)
    .filter(([name]) => name.startsWith('metadata[') && name.endsWith(']'))
    .map(([name, value]) => [name.slice('metadata['.length, -1), value]);
}

/** The errors of a query's metadata filter: each key and value as metadata holds them (a value sent once). */
export function metadataQueryFindings(sent: Record<string, unknown>): FieldError[] {
  const pairs = metadataOfQuery(sent);
  const errors = pairs.flatMap(([key, value]): FieldError[] => {
    if (Array.isArray(value)) return [{ location: 'query', field: named(key), message: 'must be sent once' }];
    const message = pairProblem(key, value);
    return message ? [{ location: 'query', field: named(key), message }] : [];
  });
  if (pairs.length > MAX_KEYS) {
    errors.push({ location: 'query', field: 'metadata', message: `may filter on at most ${MAX_KEYS} keys` });
  }
  return errors;
}

/** A record's metadata as stored: keys in order, so that equal metadata is equal text. */
export function serializeMetadata(metadata: Metadata): string {
  return JSON.stringify(Object.fromEntries(Object.entries(metadata).sort(([a], [b]) => (a < b ? -1 : 1))));
}

export function parseMetadata(stored: string | null | undefined): Metadata {
  return stored ? (JSON.parse(stored) as Metadata) : {};
}

/**
 * `changes` applied to `current`: a key with a value is set, one with an empty value removed. The keys past
 * MAX_KEYS when the result would hold more (those sent that were new), or the result.
 */
export function mergeMetadata(current: Metadata, changes: Metadata): { metadata: Metadata } | { tooMany: string[] } {
  // A Map, and own properties only: a key such as "__proto__" is a key like any other.
  const merged = new Map(Object.entries(current));
  for (const [key, value] of Object.entries(changes)) {
    if (value === '') merged.delete(key);
    else merged.set(key, value);
  }
  if (merged.size <= MAX_KEYS) return { metadata: Object.fromEntries(merged) };
  const added = Object.entries(changes)
    .filter(([key, value]) => value !== '' && !Object.hasOwn(current, key))
    .map(([key]) => key);
  return { tooMany: added.slice(Math.max(0, added.length - (merged.size - MAX_KEYS))) };
}

/** The error of a merge past MAX_KEYS, naming the keys that did not fit. */
export function tooManyKeysFindings(keys: string[]): FieldError[] {
  return keys.map((key) => ({
    location: 'body' as const,
    field: named(key),
    message: `does not fit: a record holds at most ${MAX_KEYS} metadata keys (remove one with an empty value first)`,
  }));
}
