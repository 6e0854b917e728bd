// GET /event-types serves the contract's `webhooks` section: every type, in its order, with the schema of its
// payload self-contained (no $ref), its description and the read scope a subscription needs; a real event of the
// log validates against its served schema; any key of the account may read it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { schemaErrors } from '../../scripts/conformance/validator.js';
import { issueKey } from '../../server/accounts/keys.js';
import { spec } from '../support/contract.js';
import { startServer, type TestAccount, type TestServer } from '../support/server.js';

let server: TestServer;
let account: TestAccount;

beforeAll(async () => {
  server = await startServer();
  account = await server.account();
});
afterAll(async () => {
  await server?.close();
});

describe('GET /event-types', () => {
  it("is the spec's webhooks section, each schema self-contained", async () => {
    const { data, response } = await account.client.GET('/event-types');
    expect(response.status).toBe(200);
    const served = data?.data ?? [];
    const webhooks = spec.document.webhooks as Record<string, unknown>;
    expect(served.map((t) => t.type)).toEqual(Object.keys(webhooks));
    expect(JSON.stringify(served)).not.toContain('"$ref"');
    for (const type of served) {
      expect(type.schema).toEqual(spec.model.webhooks.get(type.type));
      expect((type.schema.properties as { type: { const: string } }).type.const).toBe(type.type);
      expect(type.description).toBe(spec.model.webhooks.get(type.type)?.description);
    }
    expect(served.find((t) => t.type === 'space.updated')).toMatchObject({
      read_scope: 'spaces:read',
      subscribable: true,
    });
    expect(served.find((t) => t.type === 'webhook.test')).toMatchObject({ subscribable: false });
    expect(served.find((t) => t.type === 'webhook_endpoint.disabled')).toMatchObject({ read_scope: 'webhooks:read' });
  });

  it('validates the events the log holds, and answers a key of any scope', async () => {
    await account.client.POST('/spaces', { body: { name: 'typed' } });
    const { key } = await issueKey(server.db, account.name, { scopes: ['domains:read'] });
    const response = await fetch(`${server.apiUrl}/event-types`, { headers: { Authorization: `Bearer ${key}` } });
    expect(response.status).toBe(200);
    const served = ((await response.json()) as { data: Array<{ type: string; schema: Record<string, unknown> }> }).data;
    const events = await account.client.GET('/events', { params: { query: { per_page: 10 } } });
    const event = events.data?.data[0] as { type: string };
    const schema = served.find((t) => t.type === event.type)?.schema;
    expect(schema).toBeDefined();
    expect(schemaErrors(schema as Record<string, unknown>, event)).toBeFalsy();
    expect(schemaErrors(schema as Record<string, unknown>, { ...event, type: 'nonsense' })).toBeTruthy();
  });
});
