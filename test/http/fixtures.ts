// Seeding records through the API for tests whose subject is something else (auth, isolation).
import { serverForFile } from '../support/file-server.js';
import type { TestAccount } from '../support/server.js';
import type { Resource, SpecOperation } from '../support/spec-operations.js';

let created = 0;

/** Stores a domain or a space for the account and returns its id; names are unique across the test run. */
export async function createRecord(account: TestAccount, resource: Resource, prefix = account.name): Promise<number> {
  const n = ++created;
  const response =
    resource === 'domains'
      ? await account.client.POST('/domains', { body: { name: `${prefix}-${n}.example.com` } })
      : await account.client.POST('/spaces', { body: { name: `${prefix} space ${n}`, color: 3 } });
  if (response.response.status !== 201 || !response.data) {
    throw new Error(`seeding a record of ${resource} failed with ${response.response.status}`);
  }
  return response.data.data.id;
}

/** For a test file: its server, an account holding one domain and one space, and helpers to address them. */
export async function serverWithRecords() {
  const { server, account } = await serverForFile();
  const ids: Record<Resource, number> = {
    domains: await createRecord(account, 'domains'),
    spaces: await createRecord(account, 'spaces'),
  };
  return {
    server,
    alice: account,
    ids,
    auth: () => ({ Authorization: `Bearer ${account.key}` }),
    /** The id of the account's record that an operation on a single record addresses. */
    recordIdOf: (operation: SpecOperation) => ids[operation.resource],
  };
}
