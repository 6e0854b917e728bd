// The scope each operation declares (`security: [{ bearerAuth: [spaces:write] }]`), held against a read-only key
// (`--read-only-api-key`, DSS_READONLY_API_KEY: a key holding every `…:read` scope and nothing else): an operation
// declaring only read scopes serves it, any other refuses it with 403 naming the scope it needs. Writes go without
// a body, and to the run's own records, so a deployment that wrongly serves one changes nothing of anyone else's.
import type { Operation } from '../../server/spec-model.js';
import { call } from './calls.js';
import type { Context } from './context.js';
import type { Exchange } from './http.js';
import { pool } from './pool.js';
import { validRequestOf } from './probes.js';
import { limitation } from './profiles.js';
import { checkResponse } from './response-checks.js';

const isRead = (scope: string) => scope.endsWith(':read');

/** What the answer to the read-only key breaks, or undefined when it is right. */
export function scopeFinding(declared: string[], exchange: Exchange): string | undefined {
  const { status, headers, json } = exchange.reply;
  if (declared.every(isRead)) {
    return status === 401 || status === 403
      ? `a read-only key was refused (${status}) though the operation declares only ${declared.join(', ')}`
      : undefined;
  }
  const needed = declared.filter((scope) => !isRead(scope));
  if (status !== 403)
    return `a read-only key got ${status || 'no answer'}, not 403, though it lacks ${needed.join(', ')}`;
  const accepted = headers['x-accepted-scopes'] ?? '';
  const detail = String((json as { detail?: unknown } | undefined)?.detail ?? '');
  const unnamed = needed.filter((scope) => !accepted.includes(scope) && !detail.includes(scope));
  return unnamed.length > 0
    ? `the 403 does not name the scope it lacks (${unnamed.join(', ')}) in X-Accepted-Scopes or its detail`
    : undefined;
}

export async function probeScopes(ctx: Context): Promise<void> {
  const scoped = ctx.model.operations.filter((op) => op.scopes.length > 0 && op.security[0]?.kind === 'bearer');
  await pool(scoped, ctx.concurrency, async (operation: Operation) => {
    const skipped =
      limitation(ctx, 'scope_enforced') ??
      (ctx.readOnly ? undefined : 'give a read-only key (--read-only-api-key or DSS_READONLY_API_KEY) to check scopes');
    if (skipped) return ctx.results.skip(operation.id, 'scope_enforced', skipped);
    const { ids } = validRequestOf(ctx, operation);
    const exchange = await call(ctx, operation, { ids, account: ctx.readOnly });
    checkResponse(ctx.results, operation, exchange);
    ctx.results.judge(operation.id, 'scope_enforced', scopeFinding(operation.scopes, exchange), exchange);
  });
}
