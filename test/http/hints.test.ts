// Errors that say how to fix the request: a path missing /api/v1 or with a trailing slash names the path meant;
// a domain name that is an IP address, or carries a scheme, port or path, says so; a 409 says whose the name is
// (without saying which other account) and names what was sent beside its stored form.
import { describe, expect, it } from 'vitest';
import { serverForFile } from '../support/file-server.js';
import { expectProblem } from '../support/problems.js';

const { server, account } = await serverForFile();
const other = await server.account('hints-other');
const auth = (key = account.key) => ({ Authorization: `Bearer ${key}` });
const FORM = 'application/x-www-form-urlencoded';

async function storeDomain(name: string, key = account.key): Promise<Response> {
  return server.fetch('/api/v1/domains', {
    method: 'POST',
    headers: { ...auth(key), 'Content-Type': FORM },
    body: new URLSearchParams({ name }).toString(),
  });
}

describe('404 for a path that is almost right', () => {
  it.each([
    ['/domains', "There is no resource at /domains. Did you mean /api/v1/domains? The API's paths start with /api/v1."],
    [
      '/spaces/12',
      "There is no resource at /spaces/12. Did you mean /api/v1/spaces/12? The API's paths start with /api/v1.",
    ],
    [
      '/domains/',
      "There is no resource at /domains/. Did you mean /api/v1/domains? The API's paths start with /api/v1.",
    ],
    [
      '/api/v1/domains/',
      'There is no resource at /api/v1/domains/. Did you mean /api/v1/domains, without the trailing slash?',
    ],
    [
      '/api/v1/spaces/3/',
      'There is no resource at /api/v1/spaces/3/. Did you mean /api/v1/spaces/3, without the trailing slash?',
    ],
    ['/api/v1/nothing', 'There is no resource at /api/v1/nothing.'],
    ['/nothing', 'There is no resource at /nothing.'],
  ])('GET %s', async (path, detail) => {
    const problem = await expectProblem(await server.fetch(path, { headers: auth() }), 404);
    expect(problem.detail).toBe(detail);
  });
});

describe('a domain name that is almost a host name', () => {
  it.each([
    [
      '1.2.3.4',
      'must be a host name such as shop.example.com; 1.2.3.4 is an IP address, and IP addresses are not domain names',
    ],
    [
      '[2001:db8::1]',
      'must be a host name such as shop.example.com; [2001:db8::1] is an IP address, and IP addresses are not domain names',
    ],
    [
      'http://shop.example',
      'must be a host name alone, without the scheme: send shop.example, not http://shop.example',
    ],
    [
      'https://shop.example.com/',
      'must be a host name alone, without the scheme and the path: send shop.example.com, not https://shop.example.com/',
    ],
    [
      'shop.example.com:8080',
      'must be a host name alone, without the port: send shop.example.com, not shop.example.com:8080',
    ],
  ])('%s is refused with what to send instead', async (name, message) => {
    const problem = await expectProblem(await storeDomain(name), 422);
    expect(problem.errors).toEqual([{ location: 'body', field: 'name', message }]);
  });

  it('keeps the general message for a value that is nothing like a host name', async () => {
    const problem = await expectProblem(await storeDomain('not a host'), 422);
    expect((problem.errors as Array<{ message: string }>)[0]?.message).toMatch(
      /^must be a host name such as shop\.example\.com: two or more labels/,
    );
  });
});

describe('409 for a name that is taken', () => {
  it('in this account: names the record, and what was sent beside the stored form', async () => {
    const first = await storeDomain('bücher.example');
    expect(first.status).toBe(201);
    const { data } = (await first.json()) as { data: { id: number } };
    const problem = await expectProblem(await storeDomain('BÜCHER.example.'), 409);
    expect(problem.detail).toBe(
      `A domain named xn--bcher-kva.example (sent as BÜCHER.example.) already exists in this account: /api/v1/domains/${data.id}.`,
    );
    const same = await expectProblem(await storeDomain('xn--bcher-kva.example'), 409);
    expect(same.detail).toBe(
      `A domain named xn--bcher-kva.example already exists in this account: /api/v1/domains/${data.id}.`,
    );
  });

  it('held active in another account: says so and how a name is proven, without naming the account or its record', async () => {
    const stored = await storeDomain('taken.example', other.key);
    expect(stored.status).toBe(201);
    const { data } = (await stored.json()) as { data: { id: number } };
    // Held active below the API: the DNS proof itself is tested against a real DNS server (test/dns).
    await server.db.updateTable('domains').set({ status: 'active' }).where('id', '=', data.id).execute();
    const problem = await expectProblem(await storeDomain('Taken.Example'), 409);
    expect(problem.detail).toMatch(
      /^The domain name taken\.example \(sent as Taken\.Example\) is held by another account, which proved control of it with a DNS TXT record at _dss-challenge\.taken\.example\./,
    );
    expect(problem.detail).not.toContain('hints-other');
    expect(problem.detail).not.toMatch(/\d/);
  });
});
