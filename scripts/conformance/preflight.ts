// Before any check: is the target testable at all? A base URL without the spec's path prefix, a wrong key or a
// host that does not answer would otherwise flood the report with hundreds of meaningless failures (and passes:
// an odd id "gets 404" on a path that does not exist). The run stops with one sentence instead.

import { call } from './calls.js';
import type { Account, Context } from './context.js';
import type { Exchange } from './http.js';

/** The target cannot be tested as given; the CLI prints the message and exits 2. */
export class PreflightError extends Error {}

/** The spec's own path prefix (servers[0].url, e.g. "/api/v1"), when it has one. */
function serverPrefix(ctx: Context): string | undefined {
  const servers = ctx.model.document.servers as Array<{ url?: string }> | undefined;
  const url = servers?.[0]?.url ?? '';
  const path = /^https?:\/\//.test(url) ? new URL(url).pathname : url;
  const prefix = path.replace(/\/+$/, '');
  return prefix.startsWith('/') && prefix !== '' ? prefix : undefined;
}

const summary = (exchange: Exchange) => `${exchange.request.method} ${exchange.request.url}`;

/**
 * Why every request got 401, for the operator: the deployment's own problem (an expired or revoked key says so)
 * when it gave one, the question of which key it is only when it said nothing.
 */
function refusedKey(exchanges: Exchange[], flag: string): string {
  const problem = exchanges
    .map((exchange) => exchange.reply.json as { type?: unknown; title?: unknown; detail?: unknown } | undefined)
    .find((json) => typeof json?.detail === 'string' || typeof json?.title === 'string');
  const said = [problem?.title, problem?.detail].filter((part) => typeof part === 'string').join(': ');
  if (!said) return `every request got 401 with the key of ${flag} — is it a key of this deployment, and not revoked?`;
  const type = typeof problem?.type === 'string' ? ` (${problem.type})` : '';
  return `every request got 401 with the key of ${flag}: the deployment says "${said}"${type}`;
}

export async function preflight(ctx: Context): Promise<void> {
  // Reads that take no path parameter and need no body: the lists.
  const probes = ctx.model.operations.filter(
    (operation) =>
      operation.method === 'GET' &&
      operation.pathParams.length === 0 &&
      operation.queryParams.every((parameter) => !parameter.required),
  );
  if (probes.length === 0) return;

  const send = (account: Account) => Promise.all(probes.map((operation) => call(ctx, operation, { account })));
  let first = await send(ctx.primary);
  // No answer at all may be a hiccup (a reset connection): one more try, a second later, before giving up.
  if (first.every((exchange) => exchange.reply.status === 0)) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    first = await send(ctx.primary);
  }
  const statuses = first.map((exchange) => exchange.reply.status);

  if (statuses.every((status) => status === 0)) {
    const error = first[0]?.reply.error ?? 'no answer';
    throw new PreflightError(
      `cannot reach ${ctx.baseUrl} (${error}) — is the service running, and are the host and port of --base-url right?`,
    );
  }
  if (statuses.every((status) => status === 404)) {
    const prefix = serverPrefix(ctx);
    const missing = prefix && !new URL(ctx.baseUrl).pathname.replace(/\/+$/, '').endsWith(prefix);
    const hint = missing ? ` — does --base-url include ${prefix}? (try ${ctx.baseUrl}${prefix})` : '';
    throw new PreflightError(
      `every request got 404 (${first.map(summary).join(', ')})${hint || " — is --base-url where the spec's paths are mounted?"}`,
    );
  }
  if (statuses.every((status) => status === 401)) {
    throw new PreflightError(refusedKey(first, '--api-key (or DSS_API_KEY)'));
  }
  if (ctx.second) {
    const second = await send(ctx.second);
    if (second.every((exchange) => exchange.reply.status === 401)) {
      throw new PreflightError(refusedKey(second, '--second-api-key (or DSS_SECOND_API_KEY)'));
    }
  }
}
