// Answers the contract allows to a valid request because of the deployment's own policy, not the input's shape:
// a webhook URL the deployment will not call (`unsafe-webhook-url`, 422: a host that resolves nowhere, or to an
// address it keeps out of reach) and an account at its webhook endpoint limit (`too-many-webhook-endpoints`,
// 409). Such an answer is judged as the documented refusal it is, never as a failure: the check it stood in the
// way of is reported as skipped with the deployment's own words, and the run learns the limit and keeps inside it.

import type { Operation } from '../../server/spec-model.js';
import type { Exchange } from './http.js';

/** Problem types (the last segment of `type`) that refuse a valid request by the deployment's policy. */
const POLICY_REFUSALS: Record<string, { status: number; limit: boolean; what: string }> = {
  'unsafe-webhook-url': { status: 422, limit: false, what: 'the deployment will not call this webhook URL' },
  'too-many-webhook-endpoints': {
    status: 409,
    limit: true,
    what: 'the account has as many webhook endpoints as the deployment allows',
  },
};

export interface Refusal {
  /** The problem type's last segment. */
  kind: string;
  /** A limit of the account (more creates are refused until a record goes), not a judgement of this input. */
  limit: boolean;
  /** What the refusal means, with the deployment's detail. */
  reason: string;
}

/** The documented policy refusal this answer is, or undefined. The operation must document its status. */
export function refusalOf(operation: Operation, exchange: Exchange): Refusal | undefined {
  const { status, json } = exchange.reply;
  const problem = json as { type?: unknown; detail?: unknown } | undefined;
  if (typeof problem?.type !== 'string' || !operation.responses[String(status)]) return undefined;
  const kind = problem.type.replace(/\/+$/, '').split('/').at(-1) ?? '';
  const known = POLICY_REFUSALS[kind];
  if (!known || known.status !== status) return undefined;
  const detail = typeof problem.detail === 'string' ? `: "${problem.detail}"` : '';
  return {
    kind,
    limit: known.limit,
    reason: `refused as the contract allows (${status} ${kind}, ${known.what}${detail})`,
  };
}
