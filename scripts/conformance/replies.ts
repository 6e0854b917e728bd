import type { Resource } from '../../server/spec-model.js';
import type { Exchange } from './http.js';

/** The record in a response body: the body itself or the object under its one wrapping property. */
export function recordOf(json: unknown, idParam: string): Record<string, unknown> | undefined {
  if (!json || typeof json !== 'object') return undefined;
  const record = json as Record<string, unknown>;
  if (idParam in record) return record;
  for (const value of Object.values(record)) {
    if (value && typeof value === 'object' && !Array.isArray(value) && idParam in value) {
      return value as Record<string, unknown>;
    }
  }
  return undefined;
}

/** The id of the record a create answered with: from the body, else the last segment of Location. */
export function idOf(resource: Resource, exchange: Exchange): string | undefined {
  const id = recordOf(exchange.reply.json, resource.idParam)?.[resource.idParam];
  if (typeof id === 'string' || typeof id === 'number') return String(id);
  const location = exchange.reply.headers.location;
  return location ? decodeURIComponent(location.replace(/\/$/, '').split('/').at(-1) ?? '') || undefined : undefined;
}

/** The items of a list response: the body when it is an array, else its first array property. */
export function itemsOf(json: unknown): unknown[] | undefined {
  if (Array.isArray(json)) return json;
  if (!json || typeof json !== 'object') return undefined;
  return Object.values(json).find(Array.isArray) as unknown[] | undefined;
}

export const is2xx = (status: number) => status >= 200 && status < 300;
export const is4xx = (status: number) => status >= 400 && status < 500;
