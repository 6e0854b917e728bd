// MAX_CONNECTIONS: its default leaves descriptors for the database, the log and new clients below ulimit -n.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultMaxConnections, openFilesLimit, parseMaxConnections } from '../../server/max-connections.js';

describe('defaultMaxConnections', () => {
  it.each([
    [1024, 922],
    [256, 192],
    [65_536, 58_983],
    [20_000, 18_000],
    [undefined, 4000],
  ])('with a descriptor limit of %s is %s', (limit, expected) => {
    expect(defaultMaxConnections(limit)).toBe(expected);
  });
});

describe('openFilesLimit', () => {
  const dir = mkdtempSync(join(tmpdir(), 'dss-limits-'));
  const file = (name: string, text: string) => {
    writeFileSync(join(dir, name), text);
    return join(dir, name);
  };
  it.each([
    ['Max open files            1024                 524288               files\n', 1024],
    ['Max open files            unlimited            unlimited            files\n', Number.MAX_SAFE_INTEGER],
    ['Max processes             63504                63504                processes\n', undefined],
  ])('reads %j as %s', (text, expected) => {
    expect(openFilesLimit(file(`limits-${expected}`, `Limit Soft Limit Hard Limit Units\n${text}`))).toBe(expected);
  });
  it('is undefined without the file', () => {
    expect(openFilesLimit(join(dir, 'missing'))).toBeUndefined();
    rmSync(dir, { recursive: true, force: true });
  });
});

describe('parseMaxConnections', () => {
  it.each([
    ['1', 1],
    ['1000000', 1_000_000],
  ])('takes %s', (text, expected) => {
    expect(parseMaxConnections(text)).toBe(expected);
  });
  it.each(['0', '1000001', '-1', '1e3', '', 'AUTO'])('refuses %j', (text) => {
    expect(parseMaxConnections(text)).toEqual({ error: expect.stringMatching(/^MAX_CONNECTIONS must be/) });
  });
  it('takes auto as the default for this process', () => {
    expect(parseMaxConnections('auto')).toBe(defaultMaxConnections(openFilesLimit()));
  });
});
