// The one error type of the service. Anything thrown as an HttpProblem reaches the client as
// application/problem+json (RFC 9457) with the same status, title, detail and field errors.
export interface FieldError {
  location: 'body' | 'query' | 'path' | 'header';
  field: string;
  message: string;
}

export const PROBLEM_TYPE_BASE = 'https://domain-space-service.dev/problems/';

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  409: 'Conflict',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
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
