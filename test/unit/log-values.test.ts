// The request log's bounds on a request's own text: URL, header names and values, and all headers together.
import { describe, expect, it } from 'vitest';
import {
  bounded,
  LOGGED_HEADERS_CHARS,
  LOGGED_NAME_CHARS,
  LOGGED_VALUE_CHARS,
  loggedHeaders,
  REDACTED,
} from '../../server/http/pipeline/log-values.js';

describe('bounded', () => {
  it.each([
    ['short', 10, 'short'],
    ['exactly10!', 10, 'exactly10!'],
    ['eleven char', 10, 'eleven cha...[1 more]'],
    ['"'.repeat(15_000), 3, '"""...[14997 more]'],
  ])('cuts %j at %i to %j', (text, max, expected) => {
    expect(bounded(text, max)).toBe(expected);
  });
});

describe('loggedHeaders', () => {
  it('keeps short headers as they are, lists included', () => {
    const headers = { host: 'api.example', 'user-agent': 'curl/8', 'set-cookie': ['a=1', 'b=2'] };
    expect(loggedHeaders(headers)).toEqual(headers);
  });

  it.each([
    ['authorization', 'Bearer dss_live_secret'],
    ['proxy-authorization', 'Basic c2VjcmV0'],
    ['cookie', 'session=secret'],
    ['x-api-key', 'dss_live_secret'],
  ])('redacts %s whatever its value', (name, value) => {
    const logged = loggedHeaders({ host: 'api.example', [name]: value });
    expect(logged).toEqual({ host: 'api.example', [name]: REDACTED });
    expect(JSON.stringify(logged)).not.toContain('secret');
  });

  it('redacts a repeated credential header sent as a list', () => {
    expect(loggedHeaders({ cookie: ['a=secret', 'b=secret'] as unknown as string })).toEqual({ cookie: REDACTED });
  });

  it('cuts a 15 KB value of quotes and 0xff bytes, and a 15 KB name', () => {
    const value = '"\u00ff'.repeat(7_500);
    const logged = loggedHeaders({ 'x-junk': value, [`x-${'n'.repeat(15_000)}`]: 'v' });
    expect(logged['x-junk']).toBe(bounded(value, LOGGED_VALUE_CHARS));
    expect(Object.keys(logged)[1]).toHaveLength(LOGGED_NAME_CHARS + '...[14938 more]'.length);
    expect(JSON.stringify(logged).length).toBeLessThan(2 * (LOGGED_VALUE_CHARS + LOGGED_NAME_CHARS) + 200);
  });

  it('stops at the budget of all headers and says how many it left out', () => {
    const many = Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`x-h${i}`, 'v'.repeat(100)]));
    const logged = loggedHeaders(many);
    const kept = Object.keys(logged).filter((name) => name !== '...');
    expect(kept.length).toBeLessThan(200);
    expect(logged['...']).toBe(200 - kept.length);
    expect(JSON.stringify(logged).length).toBeLessThan(LOGGED_HEADERS_CHARS + LOGGED_VALUE_CHARS + 200);
  });
});
