// ApiSpec.pathsDocument: part of the spec for a tool that reads some paths (a validator per resource). Without
// responses, each operation is as the spec writes it but for `responses`, and every reference still resolves.
import { describe, expect, it } from 'vitest';
import { ApiSpec, METHODS } from '../../server/spec-model.js';

const spec = ApiSpec.load();
const TEMPLATES = ['/spaces', '/spaces/{id}'];

type Json = Record<string, unknown>;
const operations = (document: Json) =>
  Object.entries(document.paths as Record<string, Json>).flatMap(([template, item]) =>
    METHODS.filter((method) => item[method] !== undefined).map((method) => ({
      name: `${method} ${template}`,
      operation: item[method] as Json,
    })),
  );

/** Every `$ref` in a node, however deep. */
function refsIn(node: unknown, found: string[] = []): string[] {
  if (Array.isArray(node)) for (const item of node) refsIn(item, found);
  else if (node && typeof node === 'object')
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string') found.push(value);
      else refsIn(value, found);
    }
  return found;
}

const resolves = (document: Json, ref: string) =>
  ref
    .slice(2)
    .split('/')
    .map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'))
    .reduce<unknown>((node, part) => (node as Json | undefined)?.[part], document) !== undefined;

describe('ApiSpec.pathsDocument', () => {
  const whole = spec.pathsDocument(TEMPLATES);
  const requests = spec.pathsDocument(TEMPLATES, { withResponses: false });

  it('holds only the paths asked for', () => {
    expect(Object.keys(whole.paths as Json)).toEqual(TEMPLATES);
    expect(Object.keys(requests.paths as Json)).toEqual(TEMPLATES);
  });

  it('with responses, keeps every operation as the spec writes it', () => {
    for (const { name, operation } of operations(whole)) {
      const [method = '', template = ''] = name.split(' ');
      expect(operation, name).toEqual((spec.document.paths as Record<string, Json>)[template]?.[method]);
      expect(operation.responses, name).toBeDefined();
    }
  });

  it('without responses, keeps every operation but its responses', () => {
    const withThem = new Map(operations(whole).map(({ name, operation }) => [name, operation]));
    const found = operations(requests);
    expect(found.map(({ name }) => name)).toEqual([...withThem.keys()]);
    for (const { name, operation } of found) {
      expect(operation, name).not.toHaveProperty('responses');
      const { responses: _responses, ...rest } = withThem.get(name) as Json;
      expect(operation, name).toEqual(rest);
    }
  });

  it('resolves every reference in either form, and leaves out the components only responses use', () => {
    for (const document of [whole, requests]) {
      const refs = refsIn(document);
      expect(refs.length).toBeGreaterThan(0);
      expect(refs.filter((ref) => !resolves(document, ref))).toEqual([]);
    }
    const count = (document: Json) =>
      Object.values(document.components as Record<string, Json>).reduce((n, kind) => n + Object.keys(kind).length, 0);
    expect(count(requests)).toBeLessThan(count(whole));
    expect((requests.components as Record<string, Json>).responses).toBeUndefined();
  });

  it('is a copy: editing it leaves the spec as it was', () => {
    const before = JSON.stringify(spec.document);
    const copy = spec.pathsDocument(TEMPLATES, { withResponses: false });
    (copy.paths as Record<string, Json>)['/spaces'] = {};
    expect(JSON.stringify(spec.document)).toBe(before);
  });
});
