// One server per test file: started when the file loads (top-level await), stopped after its last test, with
// the account its tests act as.
import { afterAll } from 'vitest';
import { startServer, type TestAccount, type TestServer } from './server.js';

export async function serverForFile(accountName = 'alice'): Promise<{ server: TestServer; account: TestAccount }> {
  const server = await startServer();
  afterAll(() => server.close());
  return { server, account: await server.account(accountName) };
}
