// Webhooks end to end: a receiver the deployment may call (the runner's own, on this machine; or --webhook-url,
// a public URL forwarding to it), an endpoint subscribed to every event, changes made through the API, and
// every delivery judged: its Standard Webhooks signature with the secret the create showed (the
// `standardwebhooks` package, as a receiver would verify; a devDependency, as the runner itself is dev tooling
// run from a checkout with `npm run conformance`), its payload against the spec's `webhooks` schema for its
// type, the same `webhook-id` on a retry (the receiver fails the first attempt of the test event) and on a
// redelivery, and both signatures during a secret rotation's overlap. Without a receiver the deployment may
// call, the report says which checks could not be made and why.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { flatten, type Operation, type Schema } from '../../server/spec-model.js';
import { call } from './calls.js';
import type { Context } from './context.js';
import type { Input } from './inputs.js';
import { createRecord, forget, ledgerOf } from './records.js';
import { refusalOf } from './refusals.js';
import { idOf, is2xx } from './replies.js';
import { checkResponse } from './response-checks.js';
import type { CheckName } from './results.js';
import { schemaErrors } from './validator.js';

export const WEBHOOK_CHECKS: CheckName[] = [
  'webhook_signature',
  'webhook_payload',
  'webhook_same_id',
  'webhook_rotation',
];

/** How long the run waits for an expected delivery (a retry comes after 5 s by the standard schedule). */
const DELIVERY_WAIT_MS = 20_000;

export interface Delivery {
  path: string;
  headers: Record<string, string>;
  body: string;
  /** The payload's `type`, when it has one. */
  type: string | undefined;
  /** What the receiver answered. */
  status: number;
  at: number;
}

/** An HTTP server that takes deliveries (any path) and keeps them; it fails the first of a type when asked. */
export class Receiver {
  readonly deliveries: Delivery[] = [];
  /** Event types whose first delivery is answered 500, so that the deployment retries it. */
  readonly failFirst = new Set<string>();
  private waiters: Array<() => void> = [];

  private constructor(private readonly server: Server) {}

  static async start(port: number): Promise<Receiver> {
    let receiver: Receiver | undefined;
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => receiver?.take(req.url ?? '/', req.headers, Buffer.concat(chunks).toString('utf8'), res));
    });
    receiver = new Receiver(server);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', resolve);
    });
    return receiver;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  private take(
    path: string,
    raw: Record<string, string | string[] | undefined>,
    body: string,
    res: import('node:http').ServerResponse,
  ): void {
    const headers = Object.fromEntries(
      Object.entries(raw).flatMap(([name, value]) => (typeof value === 'string' ? [[name, value]] : [])),
    );
    let type: string | undefined;
    try {
      const parsed = (JSON.parse(body) as { type?: unknown }).type;
      if (typeof parsed === 'string') type = parsed;
    } catch {}
    const fail = type !== undefined && this.failFirst.delete(type);
    const status = fail ? 500 : 204;
    this.deliveries.push({ path, headers, body, type, status, at: Date.now() });
    res.writeHead(status).end();
    for (const wake of this.waiters.splice(0)) wake();
  }

  /** The deliveries that satisfy `done`, once they have come, or what came within `ms`. */
  async waitFor(done: (deliveries: Delivery[]) => boolean, ms = DELIVERY_WAIT_MS): Promise<boolean> {
    const until = Date.now() + ms;
    while (!done(this.deliveries)) {
      const left = until - Date.now();
      if (left <= 0) return false;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 500));
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return true;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

const SUBJECT = '(webhooks)';
const isLoopback = (host: string) => ['127.0.0.1', 'localhost', '::1', '[::1]'].includes(host);

/** Where the receiver listens and the URL the deployment is given; or why there is none. */
export function receiverPlan(
  ctx: Context,
  webhookUrl: string | undefined,
  webhookPort: number | undefined,
): { port: number; url?: string } | string {
  if (webhookUrl) {
    const url = new URL(webhookUrl);
    const port = webhookPort ?? (isLoopback(url.hostname) ? Number(url.port || 80) : undefined);
    if (port === undefined) return '--webhook-url names another host: give --webhook-port, the port it forwards to';
    return { port, url: webhookUrl };
  }
  const target = new URL(ctx.baseUrl).hostname;
  if (!isLoopback(target)) {
    return (
      "no receiver the deployment may call: it runs on another machine, which cannot reach the runner's own " +
      'receiver; give --webhook-url (a public URL forwarding to --webhook-port)'
    );
  }
  return { port: webhookPort ?? 0 };
}

function skipAll(ctx: Context, reason: string): void {
  for (const check of WEBHOOK_CHECKS) ctx.results.skip(SUBJECT, check, reason);
}

function operation(ctx: Context, id: string): Operation | undefined {
  return ctx.model.operations.find((op) => op.id === id);
}

/**
 * Once the deployment accepted the receiver: every valid webhook URL the plan would send (a generated host,
 * which resolves nowhere and which a deployment as it comes refuses) becomes a URL under the receiver's, so the
 * endpoint checks work on records too. Their deliveries come to the receiver under `/<tag>-cases/`, answered and
 * not judged (their secrets are not kept).
 */
export function aimPlanAt(ctx: Context, base: string): number {
  let aimed = 0;
  const fieldsOf = (operationId: string) => {
    const schema = operation(ctx, operationId)?.body?.content['application/json'];
    const properties = (flatten(schema ?? {}).properties ?? {}) as Record<string, Schema>;
    return Object.keys(properties).filter((name) => flatten(properties[name] as Schema).format === 'webhook-url');
  };
  const aim = (operationId: string, input: Input | undefined) => {
    const value = input?.body?.value as Record<string, unknown> | undefined;
    if (!value || typeof value !== 'object') return;
    for (const field of fieldsOf(operationId)) {
      const sent = value[field];
      if (typeof sent !== 'string') continue;
      const path = sent.replace(/^https?:\/\/[^/]*/, '').slice(0, 100);
      value[field] = `${base}/${ctx.plan.tag}-cases${path.startsWith('/') ? path : `/${path}`}`;
      aimed++;
    }
  };
  for (const testCase of ctx.plan.valid) {
    aim(testCase.operation, testCase.input);
    if (testCase.target?.kind === 'owned' && testCase.target.create) {
      const resource = ctx.model.resources.find(
        (r) => r.updates.some((u) => u.id === testCase.operation) || r.remove?.id === testCase.operation,
      );
      if (resource) aim(resource.create.id, testCase.target.create);
    }
  }
  for (const [operationId, inputs] of Object.entries(ctx.plan.spare))
    for (const input of inputs) aim(operationId, input);
  for (const resource of ctx.model.resources) {
    for (const input of ctx.plan.targets[resource.name] ?? []) aim(resource.create.id, input);
  }
  for (const duplicate of ctx.plan.duplicates) {
    aim(duplicate.operation, duplicate.first);
    aim(duplicate.operation, duplicate.second);
  }
  return aimed;
}

export async function checkWebhooks(ctx: Context, receiver: Receiver | string, url: string | undefined) {
  if (typeof receiver === 'string') return skipAll(ctx, receiver);
  if (ctx.stateless) return skipAll(ctx, ctx.stateless);
  const store = operation(ctx, 'webhook-endpoints_store');
  const resource = ctx.model.resources.find((r) => r.create === store);
  const rotate = operation(ctx, 'webhook-endpoints_rotate_secret');
  const test = operation(ctx, 'webhook-endpoints_test');
  const redeliver = operation(ctx, 'events_redeliver');
  if (!store || !resource || !test) return skipAll(ctx, 'the spec has no webhook endpoints to subscribe with');
  const base = (url ?? `http://127.0.0.1:${receiver.port}`).replace(/\/+$/, '');
  const created = await call(ctx, store, {
    input: {
      query: {},
      body: {
        mediaType: 'application/json',
        value: {
          url: `${base}/${ctx.plan.tag}`,
          enabled_events: ['*'],
          description: `conformance run ${ctx.plan.tag}`,
        },
      },
    },
  });
  checkResponse(ctx.results, store, created);
  const id = is2xx(created.reply.status) ? idOf(resource, created) : undefined;
  if (id === undefined) {
    const refused = refusalOf(store, created);
    const why = refused
      ? `the deployment will not call the runner's receiver ${base}: ${refused.reason}${url ? '' : '; give --webhook-url (a URL it may call, forwarding to --webhook-port)'}`
      : `subscribing the receiver answered ${created.reply.status}`;
    ctx.webhooks.push(`not checked: ${why}`);
    return refused ? skipAll(ctx, why) : ctx.results.fail(SUBJECT, 'webhook_signature', why, created);
  }
  ctx.created.push({ resource, id, account: ctx.primary });
  ledgerOf(ctx, resource.name).created++;
  const secrets = [(created.reply.json as { secret?: string }).secret ?? ''];
  ctx.webhooks.push(`receiver ${base}/${ctx.plan.tag}: endpoint ${id}, subscribed to every event`);
  const aimed = aimPlanAt(ctx, base);
  if (aimed)
    ctx.webhooks.push(
      `the other endpoint checks send ${aimed} URLs under ${base}/${ctx.plan.tag}-cases/ (the deployment accepts the receiver's)`,
    );
  const ids = { [resource.idParam]: id };
  // A tunnel may put its own path in front: a delivery for the run's endpoint ends with the tag.
  const mine = (d: Delivery) => d.path.replace(/\?.*$/, '').endsWith(`/${ctx.plan.tag}`);

  // The test event, whose first attempt the receiver fails: the retry must carry the same webhook-id.
  receiver.failFirst.add('webhook.test');
  const tested = await call(ctx, test, { ids });
  checkResponse(ctx.results, test, tested);
  // Changes through the API: a record made, updated and deleted, each an event.
  const changed = ctx.model.resources.find((r) => r !== resource && r.remove && r.updates.length > 0);
  if (changed) {
    const made = await createRecord(ctx, changed, 5);
    if (made.id !== undefined) {
      const update = changed.updates[0] as Operation;
      const input = ctx.plan.spare[update.id]?.find(
        (each) => each.body && Object.keys(each.body.value as object).length,
      );
      const changedIds = { [changed.idParam]: made.id };
      checkResponse(ctx.results, update, await call(ctx, update, { ids: changedIds, ...(input ? { input } : {}) }));
      const removed = await call(ctx, changed.remove as Operation, { ids: changedIds });
      if (is2xx(removed.reply.status)) forget(ctx, changed, made.id);
    }
  }
  const tests = () => receiver.deliveries.filter((d) => mine(d) && d.type === 'webhook.test');
  const retried = await receiver.waitFor(() => tests().length >= 2 && receiver.deliveries.filter(mine).length >= 4);
  if (!receiver.deliveries.some(mine)) {
    // Subscribed, but nothing delivered at all: one failure, and no more waiting for the rest.
    const why = `no delivery came within ${DELIVERY_WAIT_MS / 1000} s of the endpoint's test event and changes`;
    ctx.results.fail(SUBJECT, 'webhook_same_id', `${why} (is the deployment's delivery worker running?)`, tested);
    for (const check of ['webhook_signature', 'webhook_payload', 'webhook_rotation'] as const) {
      ctx.results.skip(SUBJECT, check, `${why}: nothing to judge`);
    }
    ctx.webhooks.push(`nothing delivered: ${why}`);
    return;
  }
  // Its delivery log fills as the run makes changes (list-walks.ts).
  ctx.receiverEndpoint = { resource, id };
  const [first, retry] = tests();
  if (!first) {
    ctx.results.fail(
      SUBJECT,
      'webhook_same_id',
      `no delivery of the test event came within ${DELIVERY_WAIT_MS / 1000} s`,
      tested,
    );
  } else if (!retry) {
    ctx.results.fail(
      SUBJECT,
      'webhook_same_id',
      `the test event's first attempt was answered 500 and no retry came within ${DELIVERY_WAIT_MS / 1000} s`,
    );
  } else {
    ctx.results.judge(
      SUBJECT,
      'webhook_same_id',
      retry.headers['webhook-id'] === first.headers['webhook-id']
        ? undefined
        : `a retry carried webhook-id ${retry.headers['webhook-id']}, the first attempt ${first.headers['webhook-id']}`,
    );
    ctx.webhooks.push(
      `retry: the test event answered 500, tried again ${((retry.at - first.at) / 1000).toFixed(1)} s later with the same webhook-id ${retry.headers['webhook-id']}`,
    );
  }
  if (!retried)
    ctx.webhooks.push(
      `waited ${DELIVERY_WAIT_MS / 1000} s: ${receiver.deliveries.filter(mine).length} deliveries came`,
    );

  // A redelivery of an event already delivered: the event's own webhook-id again.
  const delivered = receiver.deliveries.find((d) => mine(d) && d.status < 300);
  const eventId = delivered?.headers['webhook-id'];
  if (redeliver && eventId) {
    const before = receiver.deliveries.length;
    const asked = await call(ctx, redeliver, {
      ids: { [redeliver.pathParams[0]?.name ?? 'id']: eventId },
      input: { query: {}, body: { mediaType: 'application/json', value: { endpoint_id: Number(id) } } },
    });
    checkResponse(ctx.results, redeliver, asked);
    const again = await receiver.waitFor((all) => all.slice(before).some((d) => d.headers['webhook-id'] === eventId));
    ctx.results.judge(
      SUBJECT,
      'webhook_same_id',
      !is2xx(asked.reply.status)
        ? `redelivering event ${eventId} answered ${asked.reply.status}`
        : again
          ? undefined
          : `a redelivery of event ${eventId} with its webhook-id did not come within ${DELIVERY_WAIT_MS / 1000} s`,
      asked,
    );
    if (again) ctx.webhooks.push(`redelivery: event ${eventId} came again with the same webhook-id`);
  }

  // A rotation: during the overlap each delivery carries the new and the previous signature.
  if (rotate) {
    const rotated = await call(ctx, rotate, { ids });
    checkResponse(ctx.results, rotate, rotated);
    const fresh = (rotated.reply.json as { secret?: string } | undefined)?.secret;
    if (!is2xx(rotated.reply.status) || !fresh) {
      ctx.results.fail(SUBJECT, 'webhook_rotation', `rotating the secret answered ${rotated.reply.status}`, rotated);
    } else {
      const before = receiver.deliveries.length;
      checkResponse(ctx.results, test, await call(ctx, test, { ids }));
      const came = await receiver.waitFor((all) => all.slice(before).some((d) => mine(d) && d.type === 'webhook.test'));
      const after = receiver.deliveries.slice(before).find((d) => mine(d) && d.type === 'webhook.test');
      const signatures = (after?.headers['webhook-signature'] ?? '').split(' ').filter(Boolean);
      const problem =
        !came || !after
          ? `no delivery came within ${DELIVERY_WAIT_MS / 1000} s of a test after the rotation`
          : !verifies(after, fresh)
            ? 'a delivery after the rotation does not verify with the new secret'
            : !verifies(after, secrets[0] as string)
              ? 'a delivery during the overlap does not verify with the previous secret'
              : signatures.length < 2
                ? `a delivery during the overlap carries ${signatures.length} signature(s), not the new and the previous`
                : undefined;
      ctx.results.judge(SUBJECT, 'webhook_rotation', problem, rotated);
      if (!problem)
        ctx.webhooks.push(
          `rotation: the next delivery carried ${signatures.length} signatures, one verifying with each secret`,
        );
      secrets.push(fresh);
    }
  }

  // Every delivery the receiver took: signed with a secret it was shown, a payload its type's schema accepts:
  // the schema the deployment serves at GET /event-types where it has one (a receiver would validate with it),
  // the spec's otherwise.
  const served = await servedEventTypes(ctx);
  const source = served ? 'the schema GET /event-types serves' : "the spec's webhooks schema";
  const all = receiver.deliveries.filter(mine);
  const types = new Map<string, number>();
  for (const delivery of all) {
    const type = delivery.type ?? '(no type)';
    types.set(type, (types.get(type) ?? 0) + 1);
    const signed = secrets.some((secret) => verifies(delivery, secret));
    ctx.results.judge(
      type,
      'webhook_signature',
      signed
        ? undefined
        : `delivery ${delivery.headers['webhook-id'] ?? '(no webhook-id)'} does not verify with the secret shown (webhook-signature "${delivery.headers['webhook-signature'] ?? ''}")`,
    );
    const schema = served ? served.get(type) : ctx.model.webhooks.get(type);
    let payload: unknown;
    try {
      payload = JSON.parse(delivery.body);
    } catch {}
    const errors = schema ? schemaErrors(schema, payload) : `${source} has no event of type ${type}`;
    ctx.results.judge(type, 'webhook_payload', errors && `the payload does not match ${source}: ${errors}`);
  }
  ctx.webhooks.push(
    `${all.length} deliveries judged (${[...types].map(([type, n]) => `${type} ×${n}`).join(', ')}): signature with the secret shown, payload against ${source}`,
  );
}

/** The payload schemas the deployment serves at GET /event-types, by type; undefined where the spec has no such list. */
async function servedEventTypes(ctx: Context): Promise<Map<string, Schema> | undefined> {
  const list = ctx.model.operations.find((op) => op.method === 'GET' && op.path === '/event-types');
  if (!list) return undefined;
  const asked = await call(ctx, list);
  checkResponse(ctx.results, list, asked);
  const data = (asked.reply.json as { data?: Array<{ type?: string; schema?: Schema }> } | undefined)?.data;
  if (!is2xx(asked.reply.status) || !Array.isArray(data)) return undefined;
  return new Map(data.flatMap((t) => (t.type && t.schema ? [[t.type, t.schema] as const] : [])));
}

function verifies(delivery: Delivery, secret: string): boolean {
  try {
    new Webhook(secret).verify(delivery.body, delivery.headers);
    return true;
  } catch {
    return false;
  }
}
