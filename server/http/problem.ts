// The one error type of the service. Anything thrown as an HttpProblem reaches the client as
// application/problem+json (RFC 9457) with the same status, title, detail and field errors.
export interface FieldError {
  location: 'body' | 'query' | 'path' | 'header';
  field: string;
  message: string;
}

/**
 * Problem `type` URIs are relative to the service (RFC 9457 resolves them against the request URI): stable across
 * deployments, and each opens its entry of the docs' "Problem types" table (server/http/problem-types.ts).
 */
export const PROBLEM_TYPE_BASE = '/problems/';

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  408: 'Request Timeout',
  409: 'Conflict',
  412: 'Precondition Failed',
  413: 'Content Too Large',
  414: 'URI Too Long',
  415: 'Unsupported Media Type',
  429: 'Too Many Requests',
  422: 'Unprocessable Content',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

export class HttpProblem extends Error {
  readonly title: string;

  constructor(
    readonly status: number,
    /** Last segment of the problem `type` URI, e.g. "not-found". */
    readonly kind: string,
    readonly detail: string,
    readonly extra: { errors?: FieldError[]; headers?: Record<string, string> } = {},
  ) {
    super(detail);
    this.title = TITLES[status] ?? 'Error';
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

export function validationProblem(errors: FieldError[]): HttpProblem {
  const detail =
    errors.length === 1
      ? `The request has 1 invalid field: ${errors[0]?.field}.`
      : `The request has ${errors.length} invalid fields: ${errors.map((e) => e.field).join(', ')}.`;
  return new HttpProblem(422, 'validation', detail, { errors });
}

export function notFound(resource: string, id: number | string): HttpProblem {
  return new HttpProblem(404, 'not-found', `No ${resource} with id ${id} exists in this account.`);
}
