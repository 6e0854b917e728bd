// Validation of a routed request, and the one place a 422 is built. express-openapi-validator, mounted as its
// README shows, checks the request against the spec; ours are only the checks it cannot make (each says why),
// and every finding of both becomes one field error in one problem.

import { parse } from 'node:querystring';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import type { ErrorRequestHandler, Request, RequestHandler, Response } from 'express';
import { middleware as openApiValidator } from 'express-openapi-validator';
import { type FieldFormat, MAX_FORMAT_INPUT } from '../formats.js';
import type { ApiSpec, Route } from '../spec.js';
import { type Finding, fieldMessage, type MessageContext, unknownParameterMessage } from './field-messages.js';
import { integerParameterProblem, readFormInteger } from './integers.js';
import { FORM, JSON_TYPE } from './media-types.js';
import { type FieldError, HttpProblem, validationProblem } from './problem.js';
import { context } from './request-context.js';

/** The error express-openapi-validator passes on (its README: `err.status`, `err.errors`). */
interface ValidatorError {
  status: number;
  path?: string;
  message: string;
  errors: Array<{ path: string; message: string; errorCode?: string }>;
}

function isValidatorError(error: unknown): error is ValidatorError {
  const candidate = error as Partial<ValidatorError> | null;
  return typeof candidate?.status === 'number' && Array.isArray(candidate.errors);
}

/** What our own checks found, and what the client sent, for the step that joins them with the validator's. */
interface Sent {
  route: Route;
  ours: FieldError[];
  sent: { path: Record<string, string>; query: Record<string, string>; body: unknown };
}

const sentOf = new WeakMap<Response, Sent>();

/**
 * The steps of a route that validate its request (and, in tests, its JSON response): our checks, the
 * validator's middleware, then the one 422 of both. The validator is made once per spec, formats and mode and
 * shared by every app (the test suite makes many): its steps keep nothing of one app.
 */
export function createRequestValidation(
  spec: ApiSpec,
  formats: Record<string, FieldFormat>,
  validateResponses: boolean,
): Array<RequestHandler | ErrorRequestHandler> {
  const bySpec = built.get(formats) ?? new WeakMap<ApiSpec, Map<boolean, RequestHandler[]>>();
  built.set(formats, bySpec);
  const byMode = bySpec.get(spec) ?? new Map<boolean, RequestHandler[]>();
  bySpec.set(spec, byMode);
  let validator = byMode.get(validateResponses);
  if (!validator) {
    refuseUnknownFormats(spec, formats);
    validator = openApiValidator({
      apiSpec: structuredClone(spec.document) as never,
      // Any other spec is checked against the OpenAPI schema before the app serves anything (ApiSpec.bundled).
      validateApiSpec: !spec.bundled,
      validateRequests: { allowUnknownQueryParameters: true, coerceTypes: false, allErrors: true },
      validateResponses: validateResponses ? { allErrors: true } : false,
      validateSecurity: false,
      formats: Object.fromEntries(
        Object.entries(formats).map(([name, format]) => [
          name,
          { type: 'string', validate: (value: string) => value.length <= MAX_FORMAT_INPUT && format.validate(value) },
        ]),
      ),
    }) as RequestHandler[];
    byMode.set(validateResponses, validator);
  }
  return [ourChecks, ...validator, noFindings, joinFindings(formats)];
}

const built = new WeakMap<object, WeakMap<ApiSpec, Map<boolean, RequestHandler[]>>>();

/** Before the validator: the checks it cannot make, kept until it has had its say. */
const ourChecks: RequestHandler = (req, res, next) => {
  const { route, pathParams = {} } = context(res);
  if (!route) throw new Error('request reached validation unrouted');
  const sent = { path: pathParams, query: sentQuery(req), body: req.body as unknown };
  const ours = [
    ...unknownQueryParameters(route, sent.query),
    ...integerParameters(route, sent),
    ...(req.is(FORM) ? formIntegers(route, req.body) : []),
  ];
  sentOf.set(res, { route, ours, sent });
  next();
};

/** The validator found nothing: a request is valid only if our checks found nothing either. */
const noFindings: RequestHandler = (_req, res, next) => {
  const ours = sentOf.get(res)?.ours ?? [];
  next(ours.length > 0 ? validationProblem(ours) : undefined);
};

/** The validator's findings, joined with ours into one problem in our words. */
function joinFindings(formats: Record<string, FieldFormat>): ErrorRequestHandler {
  return (error, _req, res, next) => {
    const state = sentOf.get(res);
    if (!state || !isValidatorError(error)) return next(error);
    if (error.status === 415) {
      return next(new HttpProblem(415, 'unsupported-media-type', `Send ${FORM} or ${JSON_TYPE}.`));
    }
    if (error.status !== 400) return next(error);
    const { route, ours, sent } = state;
    const said = new Set(ours.map((e) => `${e.location}:${e.field}`));
    const theirs = fieldErrorsOf(error, route, formats, sent).filter(
      (e) =>
        !said.has(`${e.location}:${e.field}`) &&
        !(e.field === '(path)' && ours.length > 0) &&
        // The validator reads "search[]=x" as the array "search"; the client sent no "search" to blame.
        !(e.location === 'query' && !Object.hasOwn(sent.query, e.field)),
    );
    next(validationProblem([...ours, ...theirs]));
  };
}

/** The query parameters as the client sent them (validation then fills in defaults in req.query). */
export function sentQuery(req: Request): Record<string, string> {
  const at = req.originalUrl.indexOf('?');
  // Every pair (routing refused over 100 of them): Node's default stops after 1000 `&`, empty pairs included.
  return at < 0
    ? {}
    : ({ ...parse(req.originalUrl.slice(at + 1), '&', '=', { maxKeys: 0 }) } as Record<string, string>);
}

/** The validator is told to allow unknown query parameters, because it would name them in a message only. */
function unknownQueryParameters(route: Route, sent: Record<string, unknown>): FieldError[] {
  const known = route.queryNames;
  return Object.keys(sent)
    .filter((name) => !known.includes(name))
    .map((name) => ({
      location: 'query',
      field: name,
      message: unknownParameterMessage(known),
    }));
}

/** The validator coerces "1e3" or "01" to an integer, and 400 nines to Infinity: these are judged as text. */
function integerParameters(
  route: Route,
  sent: { path: Record<string, string>; query: Record<string, unknown> },
): FieldError[] {
  return route.parameters
    .filter((p) => (p.in === 'path' || p.in === 'query') && p.integer)
    .flatMap((p) => {
      const value = p.in === 'path' ? sent.path[p.name] : sent.query[p.name];
      const message = typeof value === 'string' ? integerParameterProblem(value, p.bounds) : undefined;
      return message ? [{ location: p.in as 'path' | 'query', field: p.name, message }] : [];
    });
}

/**
 * Form values are text and the validator checks form bodies without coercion (so that JSON {"color": "3"} is
 * a type error): the spec's integer fields become numbers here, in place. An empty one is a field left blank
 * (what HTML forms and API consoles send), which the spec says counts as not sent.
 */
function formIntegers(route: Route, body: Record<string, unknown>): FieldError[] {
  return route.formIntegerFields.flatMap(({ name, bounds }) => {
    const value = body[name];
    if (value === '') delete body[name];
    if (typeof value !== 'string' || value === '') return [];
    const read = readFormInteger(value, bounds);
    if ('value' in read) body[name] = read.value;
    return 'problem' in read && read.problem ? [{ location: 'body' as const, field: name, message: read.problem }] : [];
  });
}

/** Ajv with ajv-formats, as the validator has them: in strict mode, a schema with a format it lacks does not compile. */
const strictAjv = new Ajv({ strict: true });
// ajv-formats is CommonJS: its default export arrives as the module object under NodeNext typing.
(addFormats as unknown as { default: (ajv: Ajv) => void }).default(strictAjv);
function knownToAjv(format: string): boolean {
  try {
    strictAjv.compile({ type: 'string', format });
    return true;
  } catch {
    return false;
  }
}

/**
 * Ajv only warns about a format it does not know and then accepts any value, so a resource module left out of
 * the app would silently drop its field rules: the app refuses to start instead.
 */
function refuseUnknownFormats(spec: ApiSpec, formats: Record<string, FieldFormat>): void {
  const unknown = new Map<string, string>();
  const walk = (node: unknown, at: string): void => {
    if (Array.isArray(node)) {
      node.forEach((item, i) => {
        walk(item, `${at}/${i}`);
      });
      return;
    }
    if (typeof node !== 'object' || node === null) return;
    for (const [key, value] of Object.entries(node)) {
      if (key === 'format' && typeof value === 'string' && !(value in formats) && !knownToAjv(value)) {
        unknown.set(value, at);
      }
      // Examples and descriptions may hold a property called "format"; only schemas are walked.
      if (key !== 'example' && key !== 'examples') walk(value, `${at}/${key}`);
    }
  };
  walk(spec.document, '#');
  if (unknown.size > 0) {
    const list = [...unknown].map(([format, at]) => `"${format}" (at ${at})`).join(', ');
    throw new Error(`The spec uses formats that no resource module validates: ${list}.`);
  }
}

const LOCATIONS: Record<string, FieldError['location']> = {
  body: 'body',
  query: 'query',
  params: 'path',
  headers: 'header',
};

/** Turns the validator's findings into one field error per bad field, in our words (field-messages.ts). */
function fieldErrorsOf(
  error: ValidatorError,
  route: Route | undefined,
  formats: Record<string, FieldFormat>,
  /** What the client sent, by location: a format may have a more precise message for the value. */
  sent: Partial<Record<FieldError['location'], unknown>> = {},
): FieldError[] {
  const sentValue = (location: FieldError['location'], field: string) => {
    const values = sent[location];
    return typeof values === 'object' && values !== null ? (values as Record<string, unknown>)[field] : undefined;
  };
  const byField = new Map<string, { location: FieldError['location']; field: string; findings: Finding[] }>();
  for (const item of error.errors) {
    const [, where = '', ...rest] = item.path.split('/');
    const location = LOCATIONS[where];
    let field = location
      ? rest.map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~')).join('.') || `(${where})`
      : '(path)';
    // Header names arrive in lowercase; the spec's spelling (Idempotency-Key) is the one a client knows.
    if (location === 'header') field = route?.parameters.find((p) => p.name.toLowerCase() === field)?.name ?? field;
    // Anything else is about the request line itself (e.g. a malformed percent-escape in the path).
    const at = location ?? 'path';
    const keyword = location ? (item.errorCode?.split('.')[0] ?? '') : '';
    const key = `${at}\u0000${field}`;
    const entry = byField.get(key) ?? { location: at, field, findings: [] };
    entry.findings.push({ field, keyword, raw: item.message, value: sentValue(at, field) });
    byField.set(key, entry);
  }
  const schema = route?.jsonBody;
  const context: MessageContext = {
    formats,
    acceptedFields: Object.keys(schema?.properties ?? {}),
    rejectedFields: (schema?.['x-rejected-fields'] ?? {}) as Record<string, string>,
    integerRule: (field) =>
      route?.parameters.find((p) => p.name === field && p.integer)?.bounds ??
      route?.formIntegerFields.find((f) => f.name === field)?.bounds,
  };
  return [...byField.values()].map(({ location, field, findings }) => ({
    location,
    field,
    message: fieldMessage(findings, context),
  }));
}
