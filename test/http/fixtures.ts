// Seeding records through the API for tests whose subject is something else (auth, isolation).
import type { ExampleBody } from '../../server/resource.js';
import { RESOURCE_NAMES, type ResourceName } from '../../server/resources.js';
import { serverForFile } from '../support/file-server.js';
import type { TestAccount } from '../support/server.js';
import { resourceModule, type SpecOperation } from '../support/spec-operations.js';

let created = 0;

// Any resource's create, through the account's client: the path is only known at run time here.
type AnyCreate = (
  path: string,
  init: { body: ExampleBody },
) => Promise<{ data?: { data: { id: number } }; response: Response }>;

/** Stores a record of the resource for the account and returns its id; its name begins with `${prefix}-<n>`. */
export async function createRecord(
  account: TestAccount,
  resource: ResourceName,
  prefix = account.name,
): Promise<number> {
  const body = resourceModule(resource).examples.store(`${prefix}-${++created}`);
  const response = await (account.client.POST as unknown as AnyCreate)(`/${resource}`, { body });
  if (response.response.status !== 201 || !response.data) {
    throw new Error(`seeding a record of ${resource} failed with ${response.response.status}`);
  }
  return response.data.data.id;
}

/** One record of each registered resource for the account, by resource name. */
export async function oneOfEach(account: TestAccount, prefix = account.name): Promise<Record<ResourceName, number>> {
  const ids: Partial<Record<ResourceName, number>> = {};
  for (const resource of RESOURCE_NAMES) ids[resource] = await createRecord(account, resource, prefix);
  return ids as Record<ResourceName, number>;
}

/** For a test file: its server, an account holding one record of each resource, and helpers to address them. */
export async function serverWithRecords() {
  const { server, account } = await serverForFile();
  const ids = await oneOfEach(account);
  return {
    server,
    alice: account,
    ids,
    auth: () => ({ Authorization: `Bearer ${account.key}` }),
    /** The id of the account's record that an operation on a single record addresses. */
    recordIdOf: (operation: SpecOperation) => ids[operation.resource],
  };
}
