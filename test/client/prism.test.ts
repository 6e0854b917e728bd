// The client against a Prism mock of the bundled spec (the stateless subset): every helper answers the spec's
// own examples, unwrapped, so the client is proven against the contract as well as the implementation.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  ApiError,
  createClient,
  type Domain,
  type DomainCollection,
  type DomainSpaceClient,
  type Problem,
  type Space,
  type SpaceCollection,
} from '../../client/src/index.js';
import { spec } from '../support/contract.js';
import { type Prism, startPrism } from '../support/prism.js';

let prism: Prism;
beforeAll(async () => {
  prism = await startPrism({ mode: 'mock' });
});
afterAll(() => prism.close());

/** The example Prism answers with: the response's `example`, or the first of its `examples`. */
function example<T>(path: string, method: string, status: string, mediaType = 'application/json'): T {
  const at = (node: unknown, ...keys: string[]) =>
    keys.reduce<unknown>((parent, key) => spec.resolve((parent as Record<string, unknown> | undefined)?.[key]), node);
  const content = at(spec.document.paths, path, method, 'responses', status, 'content', mediaType) as
    | { example?: unknown; examples?: Record<string, unknown> }
    | undefined;
  const found = content?.example ?? at(Object.values(content?.examples ?? {})[0], 'value');
  if (found === undefined) throw new Error(`no example for ${method} ${path} ${status}`);
  return found as T;
}

describe.each(['form', 'json'] as const)('against the mock, %s bodies', (bodyEncoding) => {
  let api: DomainSpaceClient;
  let requests: string[];
  beforeAll(() => {
    requests = [];
    api = createClient({
      // Prism serves the spec's paths without /api/v1, and takes any bearer token.
      baseUrl: prism.url,
      apiKey: 'any-key',
      bodyEncoding,
      fetch: (request, init) => {
        requests.push(`${request.method} ${new URL(request.url).pathname}`);
        return fetch(request, init);
      },
    });
  });

  test('list answers the example page', async () => {
    await expect(api.domains.list({ search: 'shop' })).resolves.toEqual(
      example<DomainCollection>('/domains', 'get', '200'),
    );
    await expect(api.spaces.list({ per_page: 25 })).resolves.toEqual(example<SpaceCollection>('/spaces', 'get', '200'));
  });

  test('listAll yields the example page and ends after one request', async () => {
    const before = requests.length;
    const names: string[] = [];
    for await (const domain of api.domains.listAll()) names.push(domain.name);
    expect(names).toEqual(example<DomainCollection>('/domains', 'get', '200').data.map((d) => d.name));
    expect(requests.slice(before)).toEqual(['GET /domains']);
  });

  test('get, create, update and replace answer the example record', async () => {
    const domain = example<{ data: Domain }>('/domains/{id}', 'get', '200').data;
    const space = example<{ data: Space }>('/spaces/{id}', 'get', '200').data;
    await expect(api.domains.get(42)).resolves.toEqual(domain);
    await expect(api.domains.create({ name: 'shop.example.com' })).resolves.toEqual(
      example<{ data: Domain }>('/domains', 'post', '201').data,
    );
    // PATCH and PUT answer their own examples: the record as the documented request changed it.
    await expect(api.domains.update(42, { not_found_page: null })).resolves.toEqual(
      example<{ data: Domain }>('/domains/{id}', 'patch', '200').data,
    );
    await expect(api.domains.replace(42, { index_page: 'https://shop.example.com/' })).resolves.toEqual(
      example<{ data: Domain }>('/domains/{id}', 'put', '200').data,
    );
    await expect(api.spaces.get(7)).resolves.toEqual(space);
    await expect(api.spaces.create({ name: 'Marketing', color: 3 })).resolves.toEqual(
      example<{ data: Space }>('/spaces', 'post', '201').data,
    );
    await expect(api.spaces.update(7, { color: 5 })).resolves.toEqual(
      example<{ data: Space }>('/spaces/{id}', 'patch', '200').data,
    );
    await expect(api.spaces.replace(7, { name: 'Sales' })).resolves.toEqual(
      example<{ data: Space }>('/spaces/{id}', 'put', '200').data,
    );
  });

  test('delete resolves to nothing', async () => {
    await expect(api.domains.delete(42)).resolves.toBeUndefined();
    await expect(api.spaces.delete(7)).resolves.toBeUndefined();
  });

  test('a body the spec refuses (color 9) is an ApiError 422 with the example problem', async () => {
    const error = await api.spaces.create({ name: 'Too colourful', color: 9 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    const problem = example<Problem>('/spaces', 'post', '422', 'application/problem+json');
    expect(error).toMatchObject({ status: 422, problem, errors: problem.errors, requestId: problem.request_id });
  });
});
