// Checks that need a server that keeps state: fixtures and the statelessness test at the start, the per-resource
// scenario (create → show → search → PUT → PATCH → show → delete → show is 404), account isolation, and the
// clean-up that deletes every record the run made.

import type { Resource } from '../../server/spec-model.js';
import { call } from './calls.js';
import type { Account, Context } from './context.js';
import { asDocumented, describeDifferences, differences, fieldsOf } from './diff.js';
import type { Exchange } from './http.js';
import type { Input } from './inputs.js';
import { pool } from './pool.js';
import { STATEFUL_REASON_MOCK } from './profiles.js';
import { createRecord, forget, ledgerOf, searchParamOf } from './records.js';
import { refusalOf } from './refusals.js';
import { is2xx, itemsOf, recordOf } from './replies.js';
import { checkResponse } from './response-checks.js';

const SCENARIOS_PER_RESOURCE = 3;

/** Makes one record per resource to try item operations on, and finds out whether the server keeps state. */
export async function setUp(ctx: Context): Promise<void> {
  if (ctx.profile === 'mock') ctx.stateless = STATEFUL_REASON_MOCK;
  for (const resource of ctx.model.resources) {
    const first = await createRecord(ctx, resource, 0);
    if (first.id === undefined) {
      ctx.log(`could not create a ${resource.name} record to work on (${first.exchange.reply.status})`);
      continue;
    }
    ctx.fixtures.set(resource.name, { id: first.id, body: first.exchange.reply.json });
    if (ctx.stateless) continue;
    // Two creates with different inputs can only answer the same id if nothing was stored.
    const second = await createRecord(ctx, resource, 1);
    if (second.id !== undefined && second.id === first.id) {
      const reason = `stateless target: two different ${resource.name} creates both answered id ${first.id}`;
      if (ctx.profile === 'server') {
        ctx.results.fail(resource.name, 'stateful_scenario', reason, second.exchange);
      } else ctx.stateless = `${reason}, so nothing created can be read back`;
    }
  }
}

/** Loose equality of a sent field and what came back: forms send text, empty clears, names are normalised. */
function reflects(sent: unknown, got: unknown): boolean {
  if (JSON.stringify(sent) === JSON.stringify(got)) return true;
  if ((sent === '' || sent === null) && got === null) return true;
  // An object (a map field such as a webhook endpoint's headers) as its JSON: String() cannot take one without a
  // prototype, as generated values may be.
  const text = (value: unknown) =>
    (typeof value === 'object' && value !== null ? JSON.stringify(value) : String(value ?? '')).trim().toLowerCase();
  return text(sent) === text(got);
}

function mismatch(sent: Input | undefined, record: Record<string, unknown> | undefined): string | undefined {
  for (const [field, value] of Object.entries((sent?.body?.value ?? {}) as Record<string, unknown>)) {
    if (!record || !reflects(value, record[field])) {
      return `${field} was sent as ${JSON.stringify(value)} but came back as ${JSON.stringify(record?.[field])}`;
    }
  }
  return undefined;
}

/** Non-empty valid update bodies for a scenario. */
function updateInputs(ctx: Context, operationId: string): Input[] {
  return (ctx.plan.spare[operationId] ?? []).filter(
    (input) => input.body && Object.keys(input.body.value as object).length > 0,
  );
}

export async function runScenarios(ctx: Context): Promise<void> {
  const all = ctx.model.resources.flatMap((resource) =>
    Array.from({ length: SCENARIOS_PER_RESOURCE }, (_, round) => ({ resource, round })),
  );
  // At least one scenario per resource, whatever the quota.
  const rounds = Math.max(1, Math.ceil(SCENARIOS_PER_RESOURCE * ctx.rotation.fraction));
  const picked = all.filter(({ round }) => round < rounds);
  for (const { resource, round } of all) {
    if (!picked.some((each) => each.resource === resource && each.round === round)) {
      ctx.results.skip(resource.name, 'stateful_scenario', ctx.rotation.leftReason);
    }
  }
  for (const { resource, round } of picked) {
    if (ctx.stateless) {
      ctx.results.skip(resource.name, 'stateful_scenario', ctx.stateless);
      continue;
    }
    const failure = await scenario(ctx, resource, round);
    if (failure?.skipped) {
      ctx.results.skip(resource.name, 'stateful_scenario', failure.message);
      continue;
    }
    ctx.results.judge(resource.name, 'stateful_scenario', failure?.message, failure?.exchange, failure?.detail);
  }
}

interface StepFailure {
  message: string;
  exchange: Exchange;
  /** Expected vs got, field by field, when a step found other values than it expected. */
  detail?: string;
  /** Not a failure: the deployment refused as the contract allows (message says how). */
  skipped?: boolean;
}

/** A step's finding: the message names the fields (so equal faults group), the detail carries the values. */
interface Finding {
  message: string;
  detail?: string;
}

/** Undefined when `got` equals `expected`; otherwise the fields that differ, expected vs got. */
function unlike(what: string, expected: unknown, got: unknown): Finding | undefined {
  const found = differences(expected, got);
  if (found.length === 0) return undefined;
  return { message: `${what}, in ${fieldsOf(found)}`, detail: describeDifferences(found) };
}

async function scenario(ctx: Context, resource: Resource, round: number): Promise<StepFailure | undefined> {
  const step = async (
    name: string,
    exchange: Exchange,
    operationId: string,
    problem: () => string | Finding | undefined,
  ): Promise<StepFailure | undefined> => {
    const operation = ctx.model.operations.find((op) => op.id === operationId);
    if (operation) checkResponse(ctx.results, operation, exchange);
    const found = problem();
    if (found === undefined) return undefined;
    const { message, detail } = typeof found === 'string' ? { message: found, detail: undefined } : found;
    return { message: `${name}: ${message}`, exchange, ...(detail ? { detail } : {}) };
  };
  const created = await createRecord(ctx, resource, 6 + round);
  if (created.refused) return { message: created.refused.reason, exchange: created.exchange, skipped: true };
  if (created.id === undefined)
    return { message: `create answered ${created.exchange.reply.status}`, exchange: created.exchange };
  const ids = { [resource.idParam]: created.id };
  const createdRecord = recordOf(created.exchange.reply.json, resource.idParam);

  if (resource.show) {
    const shown = await call(ctx, resource.show, { ids });
    const failed = await step('show after create', shown, resource.show.id, () =>
      shown.reply.status !== 200
        ? `answered ${shown.reply.status}`
        : unlike(
            'other values than the create answered',
            asDocumented(created.exchange.reply.json, resource.show?.responses['200']?.content['application/json']),
            shown.reply.json,
          ),
    );
    if (failed) return failed;
  }

  const search = searchParamOf(resource.list);
  const token = JSON.stringify(createdRecord ?? {}).match(new RegExp(`${ctx.plan.tag}[0-9a-z]+`, 'i'))?.[0];
  if (resource.list && search && token) {
    const listed = await call(ctx, resource.list, { input: { query: { [search]: token.toLowerCase() } } });
    const failed = await step(`list with ${search}=${token}`, listed, resource.list.id, () => {
      const items = itemsOf(listed.reply.json);
      if (listed.reply.status !== 200 || !items) return `answered ${listed.reply.status}`;
      const found = items.some((item) => String(recordOf(item, resource.idParam)?.[resource.idParam]) === created.id);
      return found ? undefined : 'the created record is not in the result';
    });
    if (failed) return failed;
  }

  const sentByUpdate: Array<{ input: Input; record?: Record<string, unknown> }> = [];
  for (const update of resource.updates) {
    const inputs = updateInputs(ctx, update.id);
    const input = inputs[round % Math.max(1, inputs.length)];
    const changed = await call(ctx, update, { ids, ...(input ? { input } : {}) });
    const record = recordOf(changed.reply.json, resource.idParam);
    const refused = refusalOf(update, changed);
    if (refused) return { message: refused.reason, exchange: changed, skipped: true };
    const failed = await step(`${update.method} update`, changed, update.id, () =>
      changed.reply.status !== 200 ? `answered ${changed.reply.status}` : mismatch(input, record),
    );
    if (failed) return failed;
    if (input) sentByUpdate.push({ input, ...(record ? { record } : {}) });
  }

  if (resource.show && sentByUpdate.length > 0) {
    const shown = await call(ctx, resource.show, { ids });
    const record = recordOf(shown.reply.json, resource.idParam);
    const failed = await step('show after the updates', shown, resource.show.id, () => {
      if (shown.reply.status !== 200) return `answered ${shown.reply.status}`;
      // Every field keeps the value of the last update that sent it.
      const latest: Record<string, unknown> = {};
      for (const { input, record: answered } of sentByUpdate) {
        for (const field of Object.keys(input.body?.value as object)) latest[field] = answered?.[field];
      }
      const shownFields = Object.fromEntries(Object.keys(latest).map((field) => [field, record?.[field]]));
      return unlike('other values than the last update that sent them answered', latest, shownFields);
    });
    if (failed) return failed;
  }

  if (resource.remove) {
    const removed = await call(ctx, resource.remove, { ids });
    const failed = await step('delete', removed, resource.remove.id, () =>
      is2xx(removed.reply.status) ? undefined : `answered ${removed.reply.status}`,
    );
    if (failed) return failed;
    forget(ctx, resource, created.id);
    if (resource.show) {
      const gone = await call(ctx, resource.show, { ids });
      return step('show after delete', gone, resource.show.id, () =>
        gone.reply.status === 404 ? undefined : `answered ${gone.reply.status}, not 404`,
      );
    }
  }
  return undefined;
}

/** With a second account: none of its requests reaches the first account's records, and its lists omit them. */
export async function checkIsolation(ctx: Context): Promise<void> {
  const subjects = ctx.model.resources.flatMap((r) =>
    [r.show, ...r.updates, r.remove, r.list].flatMap((op) => op ?? []),
  );
  const skipAll = (reason: string) => {
    for (const op of subjects) ctx.results.skip(op.id, 'account_isolation', reason);
  };
  if (!ctx.second) return skipAll('needs --second-api-key (a key of another account)');
  if (ctx.stateless) return skipAll(ctx.stateless);
  const second = ctx.second;
  for (const resource of ctx.model.resources) {
    const fixture = ctx.fixtures.get(resource.name);
    if (!fixture || !resource.show) continue;
    const ids = { [resource.idParam]: fixture.id };
    const before = await call(ctx, resource.show, { ids });
    for (const operation of [resource.show, ...resource.updates, resource.remove].flatMap((op) => op ?? [])) {
      const input = ctx.plan.spare[operation.id]?.[0];
      const exchange = await call(ctx, operation, { ids, account: second, ...(input ? { input } : {}) });
      checkResponse(ctx.results, operation, exchange);
      const status = exchange.reply.status;
      const problem = status === 404 ? undefined : `another account's record answered ${status}, not 404`;
      ctx.results.judge(operation.id, 'account_isolation', problem, exchange);
    }
    const after = await call(ctx, resource.show, { ids });
    const changed = after.reply.status === 200 ? unlike('', before.reply.json, after.reply.json) : undefined;
    ctx.results.judge(
      resource.remove?.id ?? resource.show.id,
      'account_isolation',
      after.reply.status !== 200
        ? `the record is gone after another account's requests (now ${after.reply.status})`
        : changed && `the record changed after another account's requests${changed.message}`,
      after,
      changed?.detail && `expected = before those requests:\n${changed.detail}`,
    );
    if (resource.list) await checkListIsolation(ctx, resource, second, fixture);
  }
}

async function checkListIsolation(
  ctx: Context,
  resource: Resource,
  second: Account,
  fixture: { id: string; body: unknown },
) {
  const list = resource.list;
  if (!list) return;
  const mine = new Set(
    ctx.created.filter((c) => c.resource === resource && c.account === ctx.primary).map((c) => c.id),
  );
  const search = searchParamOf(list);
  const token = JSON.stringify(fixture.body ?? '').match(new RegExp(`${ctx.plan.tag}[0-9a-z]+`, 'i'))?.[0];
  const queries = [{}, ...(search && token ? [{ [search]: token.toLowerCase() }] : [])];
  for (const query of queries) {
    const listed = await call(ctx, list, { account: second, input: { query } });
    checkResponse(ctx.results, list, listed);
    const items = itemsOf(listed.reply.json) ?? [];
    const leaked = items.filter((item) => mine.has(String(recordOf(item, resource.idParam)?.[resource.idParam])));
    const problem =
      listed.reply.status !== 200
        ? `the other account's list answered ${listed.reply.status}`
        : leaked.length
          ? `the other account's list shows ${leaked.length} of the first account's records`
          : undefined;
    ctx.results.judge(list.id, 'account_isolation', problem, listed);
  }
}

/** Deletes what the run created (newest first); returns how many could not be deleted. */
export async function cleanUp(ctx: Context): Promise<number> {
  const records = [...ctx.created].reverse();
  const seen = new Set<string>();
  const unique = records.filter(({ resource, id, account }) => {
    const key = `${resource.name}/${id}/${account.variable}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  const left = await pool(unique, ctx.concurrency, async ({ resource, id, account }) => {
    if (!resource.remove || ctx.stateless) return 0;
    const exchange = await call(ctx, resource.remove, { ids: { [resource.idParam]: id }, account });
    if (is2xx(exchange.reply.status) || exchange.reply.status === 404) return 0;
    ledgerOf(ctx, resource.name).left++;
    return 1;
  });
  return left.reduce<number>((sum, n) => sum + n, 0);
}
