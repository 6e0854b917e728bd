// The one error type of the service. Anything thrown as an HttpProblem reaches the client as
// application/problem+json (RFC 9457) with the same status, title, detail and field errors.
import { PROBLEM_TYPE_BASE, PROBLEMS, type ProblemKind } from './problem-catalog.js';

export { PROBLEM_TYPE_BASE };

export interface FieldError {
  location: 'body' | 'query' | 'path' | 'header';
  field: string;
  message: string;
}

/** A problem of a kind of the catalog (problem-catalog.ts), which gives its status and title. */
export class HttpProblem extends Error {
  readonly status: number;
  readonly title: string;

  constructor(
    /** Last segment of the problem `type` URI, e.g. "not-found". */
    readonly kind: ProblemKind,
    readonly detail: string,
    readonly extra: { errors?: FieldError[]; headers?: Record<string, string> } = {},
  ) {
    super(detail);
    this.status = PROBLEMS[kind].status;
    this.title = PROBLEMS[kind].title;
  }
}

/** The problem+json body. A function, not a method: libraries decorate errors they pass on (body-parser adds `body`). */
export function problemBody(problem: HttpProblem, requestId: string) {
  return {
    type: PROBLEM_TYPE_BASE + problem.kind,
    title: problem.title,
    status: problem.status,
    detail: problem.detail,
    request_id: requestId,
    ...(problem.extra.errors ? { errors: problem.extra.errors } : {}),
  };
}

/** A problem that names the fields at fault: `validation` (the contract's schemas), or a kind naming another cause. */
export function fieldProblem(kind: ProblemKind, errors: FieldError[], detail = invalidFields(errors)): HttpProblem {
  return new HttpProblem(kind, detail, { errors });
}

function invalidFields(errors: FieldError[]): string {
  return errors.length === 1
    ? `The request has 1 invalid field: ${errors[0]?.field}.`
    : `The request has ${errors.length} invalid fields: ${errors.map((e) => e.field).join(', ')}.`;
}

export const validationProblem = (errors: FieldError[]): HttpProblem => fieldProblem('validation', errors);

export function notFound(resource: string, id: number | string): HttpProblem {
  return new HttpProblem('not-found', `No ${resource} with id ${id} exists in this account.`);
}

/** A forced delivery (a test, a redelivery to one endpoint) refused: the endpoint's queue is at its limit. */
export function webhookQueueFull(endpointId: number, max: number): HttpProblem {
  return new HttpProblem(
    'webhook-queue-full',
    `Webhook endpoint ${endpointId} has ${max} undelivered events queued, the most it may have; wait for them to be delivered or given up.`,
  );
}

/** A conditional write refused: the record is at another version than If-Match named (db/owned.ts's VersionMismatchError). */
export function preconditionFailed(record: string, id: number): HttpProblem {
  return new HttpProblem(
    'precondition-failed',
    `The ${record} with id ${id} has changed since the version If-Match names; nothing was changed.`,
  );
}
