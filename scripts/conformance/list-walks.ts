// list_walk: every list the spec has (a GET whose 200 answer carries `links.next`) read past its first page by
// following links.next, as an integrator or a client's listAll does. A list with one page is filled first, with
// records of the run (each change is also an event, and a delivery to the run's receiver endpoint), within what
// is left of the run's share of the quota; a list it cannot fill is reported as skipped, saying why. The
// event log and the delivery log of 1.3.0 answered 422 to their own links.next: a walk of a few pages finds that.
import type { Operation, Resource, Schema } from '../../server/spec-model.js';
import { call } from './calls.js';
import type { Context } from './context.js';
import { describeReply, type Exchange } from './http.js';
import { createWith } from './records.js';
import { checkResponse } from './response-checks.js';

/** Pages walked after the first: enough to cross page boundaries, few enough for a list of any length. */
const PAGES_AFTER_FIRST = 3;
/** How long a list filled by background work (the delivery log) may take to show what was made. */
const SETTLE_MS = 20_000;

/** The spec's lists: GETs whose 200 answer has `links.next`. */
export function listOperations(operations: Operation[]): Operation[] {
  return operations.filter((operation) => {
    const body = operation.responses['200']?.content['application/json'] as
      | { properties?: { links?: { properties?: Record<string, Schema> } } }
      | undefined;
    return operation.method === 'GET' && body?.properties?.links?.properties?.next !== undefined;
  });
}

type Page = { data: Array<{ id?: unknown }>; links: { next: string | null } };
type ListBody = { properties?: { data?: { items?: { properties?: Record<string, Schema> } } } };

/** Per run, per resource: how many of the plan's fill inputs were taken. */
const filled = new WeakMap<Context, Map<string, number>>();

const pageOf = (exchange: Exchange): Page | undefined => {
  const json = exchange.reply.json as Partial<Page> | undefined;
  return Array.isArray(json?.data) && json?.links ? (json as Page) : undefined;
};

/**
 * Walks each list past its first page. `requestsLeft` says how many requests the run may still spend here
 * (undefined: the target sends no quota).
 */
export async function checkListWalks(ctx: Context, requestsLeft: () => number | undefined): Promise<void> {
  for (const list of listOperations(ctx.model.operations)) {
    const subject = list.id;
    if (ctx.stateless) {
      ctx.results.skip(subject, 'list_walk', ctx.stateless);
      continue;
    }
    const ids = pathIds(ctx, list);
    if (!ids) {
      ctx.results.skip(
        subject,
        'list_walk',
        `no record of this run to list under (${list.path}): for an endpoint's log, the run's receiver got no delivery`,
      );
      continue;
    }
    // The walk's own requests (its first page again after a fill is fill()'s): within the run's share, or none.
    const left = requestsLeft();
    if (left !== undefined && left < PAGES_AFTER_FIRST + 1) {
      ctx.results.skip(
        subject,
        'list_walk',
        `left for a later run: walking it takes up to ${PAGES_AFTER_FIRST + 1} requests; ${Math.max(0, left)} are left of this run's share of the quota`,
      );
      continue;
    }
    const perPage = smallestPage(list);
    const query = perPage === undefined ? {} : { per_page: String(perPage) };
    const first = () => call(ctx, list, { ids, input: { query } });
    let start = await first();
    checkResponse(ctx.results, list, start);
    let page = pageOf(start);
    if (!page) {
      ctx.results.fail(subject, 'list_walk', `the first page answered ${start.reply.status}`, start);
      continue;
    }
    if (page.links.next === null) {
      const short = Math.max(1, (perPage ?? page.data.length) + 1 - page.data.length);
      const refused = await fill(ctx, list, short, requestsLeft);
      if (refused) {
        ctx.results.skip(subject, 'list_walk', refused);
        continue;
      }
      // A list under a record (an endpoint's delivery log) fills as background work records what was made.
      start = list.pathParams.length > 0 ? await settle(ctx, list, first) : await first();
      checkResponse(ctx.results, list, start);
      page = pageOf(start);
      if (!page || page.links.next === null) {
        ctx.results.skip(
          subject,
          'list_walk',
          `could not fill it past one page: ${page?.data.length ?? 0} records after the run made ${short} changes`,
        );
        continue;
      }
    }
    ctx.results.judge(subject, 'list_walk', ...(await walk(ctx, list, page)));
  }
}

/** Follows links.next from the first page: every page 200, as the spec says, and no record twice. */
async function walk(ctx: Context, list: Operation, first: Page): Promise<[string | undefined, Exchange?]> {
  const seen = new Set(first.data.map((item) => JSON.stringify(item.id)));
  let next = first.links.next;
  for (let pages = 0; next !== null && pages < PAGES_AFTER_FIRST; pages++) {
    const url = new URL(next, `${ctx.baseUrl}/`);
    // links.next is the path under the server's root, or a whole URL: sent as given, below --base-url's origin.
    const target = next.startsWith('http') ? url : new URL(`${url.pathname}${url.search}`, new URL(ctx.baseUrl).origin);
    const exchange = await call(ctx, list, { url: target.toString() });
    checkResponse(ctx.results, list, exchange);
    const page = pageOf(exchange);
    if (exchange.reply.status !== 200 || !page) {
      const answer = describeReply(exchange.reply, ctx.secrets, 300);
      return [`following links.next (page ${pages + 2}) answered ${exchange.reply.status}: ${answer}`, exchange];
    }
    for (const item of page.data) {
      const id = JSON.stringify(item.id);
      if (seen.has(id)) return [`record ${id} came again on page ${pages + 2} of the walk`, exchange];
      seen.add(id);
    }
    if (page.data.length === 0 && page.links.next !== null) return ['an empty page with a next link', exchange];
    next = page.links.next;
  }
  return [undefined];
}

/**
 * The path parameters of a list under a record: the run's receiver endpoint for a list under an endpoint (its
 * delivery log fills as the run makes changes), else a record this run made.
 */
function pathIds(ctx: Context, list: Operation): Record<string, string> | undefined {
  if (list.pathParams.length === 0) return {};
  const parent = parentOf(ctx, list);
  if (!parent) return undefined;
  const receiver = ctx.receiverEndpoint;
  if (receiver) return receiver.resource === parent ? { [parent.idParam]: receiver.id } : undefined;
  // No receiver got deliveries: a list under an endpoint cannot fill, under another record it can.
  if (parent.create.id === 'webhook-endpoints_store') return undefined;
  const made = ctx.created.find((each) => each.resource === parent && each.account === ctx.primary);
  return made ? { [parent.idParam]: made.id } : undefined;
}

const parentOf = (ctx: Context, list: Operation): Resource | undefined =>
  ctx.model.resources.find((resource) => list.path.startsWith(`${resource.itemPath}/`));

const smallestPage = (list: Operation): number | undefined => {
  const schema = list.queryParams.find((p) => p.name === 'per_page')?.schema;
  const values = (schema?.enum as number[] | undefined) ?? (schema?.minimum !== undefined ? [schema.minimum] : []);
  return values.length > 0 ? Math.min(...values.map(Number)) : undefined;
};

/**
 * Makes `count` changes that land in the list: records of its own resource, or, for the event log and a list
 * under a record (the delivery log), records of the first resource that can be made (each an event, delivered
 * to the run's receiver endpoint). Why it could not, or undefined.
 */
async function fill(
  ctx: Context,
  list: Operation,
  count: number,
  requestsLeft: () => number | undefined,
): Promise<string | undefined> {
  const own = ctx.model.resources.find((resource) => resource.list === list);
  // A list under a record fills as the run makes changes only when its records are of events (a delivery log).
  const items = (list.responses['200']?.content['application/json'] as ListBody | undefined)?.properties?.data?.items;
  if (!own && list.pathParams.length > 0 && !items?.properties?.event_id) {
    return 'the run makes no records of this list: no change it can send adds one';
  }
  const resource = own ?? ctx.model.resources.find((each) => each !== parentOf(ctx, list) && each.remove);
  if (!resource) return 'no resource of the spec makes records of this list';
  // Each record is made now and deleted by the clean-up; and a few pages to walk.
  const cost = 2 * count + PAGES_AFTER_FIRST + 2;
  const left = requestsLeft();
  if (left !== undefined && cost > left) {
    return `filling it past one page needs about ${cost} requests; ${Math.max(0, left)} are left of this run's share of the quota`;
  }
  // Each fill takes inputs no other fill took: a unique field (a domain's name) never repeats.
  const used = filled.get(ctx) ?? new Map<string, number>();
  filled.set(ctx, used);
  const from = used.get(resource.name) ?? 0;
  const inputs = (ctx.plan.fills[resource.name] ?? []).slice(from, from + count);
  if (count > inputs.length) return `it needs ${count} more records; the run has ${inputs.length} left to fill a list`;
  used.set(resource.name, from + count);
  for (const input of inputs) {
    const made = await createWith(ctx, resource, input);
    if (made.id === undefined) {
      return `could not make ${resource.name} records to fill it (${made.refused?.reason ?? `${made.exchange.reply.status}`})`;
    }
  }
  return undefined;
}

/** The first page again, until it has a next link or SETTLE_MS have passed (deliveries are recorded after). */
async function settle(ctx: Context, list: Operation, first: () => Promise<Exchange>): Promise<Exchange> {
  const until = Date.now() + SETTLE_MS;
  for (let wait = 100; ; wait = Math.min(2 * wait, 2_000)) {
    const exchange = await first();
    checkResponse(ctx.results, list, exchange);
    if (pageOf(exchange)?.links.next || Date.now() + wait > until) return exchange;
    await new Promise((resolve) => setTimeout(resolve, wait));
  }
}
