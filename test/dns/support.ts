// Shared steps of the DNS tests: an app whose domain checks ask a real Knot server (or, switched, a server that
// never answers), and the calls of the domain lifecycle through the typed client.
import { afterAll } from 'vitest';
import { type CheckSchedule, DEFAULT_SCHEDULE, type LookupResult } from '../../server/domains/check-rules.js';
import type { DomainChecks } from '../../server/domains/checks.js';
import { routingLookup } from '../../server/domains/routing-lookup.js';
import type { RoutingTargets } from '../../server/domains/routing-targets.js';
import { type TxtLookup, txtLookup } from '../../server/domains/txt-lookup.js';
import { type KnotServer, silentServer, startKnot } from '../support/knot.js';
import { startServer, type TestAccount, type TestServer } from '../support/server.js';

export interface DnsWorld {
  knot: KnotServer;
  server: TestServer;
  checks: DomainChecks;
  /** Points the app's lookups at a server that never answers (true) or back at Knot (false). */
  silence(on: boolean): void;
}

/** Knot, a silent server and an app that looks records up through them; all stopped after the file's tests. */
export async function dnsWorld(
  options: {
    schedule?: Partial<CheckSchedule>;
    verifyLimit?: number;
    sandbox?: boolean;
    targets?: RoutingTargets;
  } = {},
): Promise<DnsWorld> {
  const knot = await startKnot();
  // Registered before anything else can fail, so that Knot never outlives the file.
  afterAll(() => knot.stop());
  const silent = await silentServer();
  // Knot gets time to answer on a busy machine; the silent server's short timeout keeps its tests cheap.
  const viaKnot = txtLookup({ servers: [knot.address], timeoutMs: 2000, tries: 3 });
  const viaSilent = txtLookup({ servers: [silent.address], timeoutMs: 300, tries: 1 });
  let current: TxtLookup = viaKnot;
  // Routing is looked up through Knot when the test gives targets (as DOMAIN_TARGET_* would).
  const routing = options.targets && routingLookup({ servers: [knot.address], timeoutMs: 2000, tries: 3 });
  const checks: DomainChecks = {
    schedule: { ...DEFAULT_SCHEDULE, ...options.schedule },
    lookup: (name: string): Promise<LookupResult> => current(name),
    verifyQuota: { limit: options.verifyLimit ?? 1000, windowSeconds: 60 },
    sandbox: options.sandbox ?? false,
    ...(options.targets && routing ? { routing: { targets: options.targets, lookup: routing } } : {}),
  };
  const server = await startServer({ domainChecks: checks });
  afterAll(async () => {
    viaKnot.close();
    viaSilent.close();
    routing?.close();
    await server.close();
    await silent.close();
  });
  return {
    knot,
    server,
    checks,
    silence(on) {
      current = on ? viaSilent : viaKnot;
    },
  };
}

export async function storeDomain(account: TestAccount, name: string) {
  const { data, response } = await account.client.POST('/domains', { body: { name } });
  if (response.status !== 201 || !data) throw new Error(`store of ${name} answered ${response.status}`);
  return data.data;
}

export async function verify(account: TestAccount, id: number) {
  return account.client.POST('/domains/{id}/verify', { params: { path: { id } } });
}

export async function verified(account: TestAccount, id: number) {
  const { data, response } = await verify(account, id);
  if (response.status !== 200 || !data) throw new Error(`verify of ${id} answered ${response.status}`);
  return data.data;
}

export async function show(account: TestAccount, id: number) {
  const { data } = await account.client.GET('/domains/{id}', { params: { path: { id } } });
  if (!data) throw new Error(`show of ${id} failed`);
  return data.data;
}
