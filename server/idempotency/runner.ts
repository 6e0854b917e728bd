// Idempotent creates (Stripe's Idempotency-Key, the IETF httpapi draft): a create that carries an
// Idempotency-Key runs at most once per key and account; a repeat with the same payload gets the saved answer.
import { createHash } from 'node:crypto';
import type { Database } from '../db/database.js';
import { HttpProblem, problemBody } from '../http/problems/problem.js';
import type { Handlers, Runner, UntypedReply } from '../http/routing/operations.js';
import type { Logger } from '../logger.js';
import { idempotencyKeys, LostKeyError, type SavedAnswer } from './repository.js';

/**
 * The payload a key is bound to: method, path and the body as parsed and validated (so a form and a JSON body
 * with the same values are the same payload; an omitted field differs from one sent, even with its default value).
 */
export function fingerprintOf(method: string, path: string, body: unknown): string {
  return createHash('sha256')
    .update(JSON.stringify([method, path, canonical(body)]))
    .digest('hex');
}

/** The value with object keys in sorted order, so field order does not change the fingerprint. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, canonical((value as Record<string, unknown>)[key])]),
  );
}

const inProgress = () =>
  new HttpProblem(
    'idempotency-key-in-use',
    'A request with this Idempotency-Key is still being processed; retry later to get its answer.',
  );

const otherPayload = () =>
  new HttpProblem(
    'idempotency-key-reused',
    'This Idempotency-Key was already used with another method, path or body; use a new key for a new request.',
  );

function answerOf(reply: UntypedReply): SavedAnswer {
  const headers: Record<string, string> = {};
  if (reply.location) headers.Location = reply.location;
  if (reply.etag) headers.ETag = reply.etag;
  return { status: reply.status, headers, body: reply.savedBody ?? reply.body };
}

/**
 * Runs operations whose request carries an Idempotency-Key (the spec declares it on the creates) once per key:
 * the record and the saved answer are written in one transaction. What is saved: the answer of every request
 * the handler ran to an end, success or client error (a 409 for a taken domain name, as Stripe does). Not saved,
 * so the key stays unused: a request that failed validation (it never gets here) and a server error (rolled back).
 */
export function idempotentCreates(db: Database, handlersOn: (db: Database) => Handlers, logger: Logger): Runner {
  const keys = idempotencyKeys(db);
  return async ({ route, input, requestId }, handle) => {
    const key = input.headers['Idempotency-Key'];
    if (key === undefined) return handle();
    const accountId = input.account.id;
    const claim = await keys.claim(accountId, key, fingerprintOf(route.method, input.url.path, input.body));
    if (claim.kind === 'other-payload') throw otherPayload();
    if (claim.kind === 'in-progress') throw inProgress();
    if (claim.kind === 'saved') {
      const { status, headers, body } = claim.answer;
      return { status, body, headers: { ...headers, 'Idempotent-Replayed': 'true' } };
    }
    const { token } = claim;
    try {
      return await db.transaction().execute(async (trx) => {
        const reply = await handle(handlersOn(trx));
        await idempotencyKeys(trx).complete(accountId, key, token, answerOf(reply));
        return reply;
      });
    } catch (error) {
      if (error instanceof LostKeyError) throw inProgress();
      const save =
        error instanceof HttpProblem && error.status < 500
          ? keys.complete(accountId, key, token, {
              status: error.status,
              headers: { 'Content-Type': 'application/problem+json', ...error.extra.headers },
              body: problemBody(error, requestId),
            })
          : keys.release(accountId, key, token);
      // The request's own error is what the client needs; a key left pending unlocks after the lock timeout.
      await save.catch((failure: unknown) => {
        logger.warn('idempotency key not finalized', { request_id: requestId, error: String(failure) });
      });
      throw error;
    }
  };
}
