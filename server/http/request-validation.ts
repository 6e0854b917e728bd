// Validation of a routed request, and the one place a 422 is built. express-openapi-validator checks the
// request against the spec; ours are only the checks it cannot make (each says why), and every finding of
// both becomes one field error in one problem. The validator is handed the match routing made (req.openapi)
// instead of matching the request a second time.

import { parse } from 'node:querystring';
import { fullFormats } from 'ajv-formats/dist/formats.js';
import type { Request, RequestHandler } from 'express';
import { middleware as openApiValidator } from 'express-openapi-validator';
import { type FieldFormat, MAX_FORMAT_INPUT } from '../formats.js';
import type { ApiSpec, Route } from '../spec.js';
import { type Finding, fieldMessage, type MessageContext, unknownParameterMessage } from './field-messages.js';
import { integerParameterProblem, readFormInteger } from './integers.js';
import { FORM, JSON_TYPE } from './media-types.js';
import { type FieldError, HttpProblem, validationProblem } from './problem.js';
import { context } from './request-context.js';

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

/** The validator's view of one operation (its own pre-processed schemas), as its request step reads it. */
interface ValidatorMatch {
  expressRoute: string;
  openApiRoute: string;
  pathParams: Record<string, unknown>;
  schema: unknown;
  serial: number;
  _responseSchema?: unknown;
}

type ValidatedRequest = Request & { openapi?: ValidatorMatch };

/**
 * The steps that validate a routed request (and, where asked, its JSON response), with the spec loaded and
 * checked now rather than on the first request.
 */
export function createRequestValidation(
  spec: ApiSpec,
  formats: Record<string, FieldFormat>,
  validateResponses: boolean,
): Promise<RequestHandler[]> {
  // Once per spec, formats and mode: a process that makes many apps (the test suite) compiles the validators
  // once. Nothing in the steps belongs to one app (the validator's app.param step is never installed).
  const bySpec = built.get(formats) ?? new WeakMap<ApiSpec, Map<boolean, Promise<RequestHandler[]>>>();
  built.set(formats, bySpec);
  const byMode = bySpec.get(spec) ?? new Map<boolean, Promise<RequestHandler[]>>();
  bySpec.set(spec, byMode);
  let steps = byMode.get(validateResponses);
  if (!steps) {
    steps = buildRequestValidation(spec, formats, validateResponses);
    byMode.set(validateResponses, steps);
    // A spec that fails to load is not remembered: the next app reports it again.
    steps.catch(() => byMode.delete(validateResponses));
  }
  return steps;
}

const built = new WeakMap<object, WeakMap<ApiSpec, Map<boolean, Promise<RequestHandler[]>>>>();

async function buildRequestValidation(
  spec: ApiSpec,
  formats: Record<string, FieldFormat>,
  validateResponses: boolean,
): Promise<RequestHandler[]> {
  refuseUnknownFormats(spec, formats);
  const steps = openApiValidator({
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
  // The validator's steps by name. Its own routing steps (path parameters, metadata) are run once per operation
  // here, never per request.
  const step = (name: string) => steps.find((handler) => handler.name === name);
  const [loaded, matcher, requestStep] = ['pathParamsMiddleware', 'metadataMiddleware', 'requestMiddleware'].map(step);
  const responseStep = validateResponses ? step('responseMiddleware') : undefined;
  if (!loaded || !matcher || !requestStep || (validateResponses && !responseStep)) {
    throw new Error('express-openapi-validator no longer has the steps this module drives; see its changelog.');
  }
  const run = (handler: RequestHandler, req: object) =>
    new Promise<void>((resolve, reject) => {
      handler(req as never, {} as never, (error?: unknown) => (error ? reject(error) : resolve()));
    });
  // Waits for the spec to load: a broken spec fails here, at start-up. (The first step would register
  // app.param handlers; routing passes the path parameters itself, so it gets an app that keeps none.)
  await run(loaded, { app: { param: () => undefined } });
  const matches = new Map<Route, ValidatorMatch>();
  for (const route of spec.operations) {
    const url = `${spec.basePath}${route.template.replace(/\{[^{}]+\}/g, '1')}`;
    const probe = { method: route.method, path: url, baseUrl: '', originalUrl: url, url, app: { enabled: () => true } };
    await run(matcher, probe);
    const match = (probe as { openapi?: ValidatorMatch }).openapi;
    if (!match) throw new Error(`express-openapi-validator did not find ${route.method} ${route.template}`);
    matches.set(route, match);
  }

  const validateRequest: RequestHandler = (req: ValidatedRequest, res, next) => {
    const { route, pathParams = {} } = context(res);
    const match = route && matches.get(route);
    if (!route || !match) throw new Error('request reached validation unrouted');
    const sent = { path: pathParams, query: sentQuery(req), body: req.body as unknown };
    const ours = [
      ...unknownQueryParameters(route, sent.query),
      ...integerParameters(route, sent),
      ...(req.is(FORM) ? formIntegers(route, req.body) : []),
    ];
    // A copy: the validator converts the parameters it checks in place (an id becomes a number).
    req.openapi = { ...match, pathParams: { ...pathParams } };
    requestStep(req, res, (error?: unknown) => {
      if (error === undefined) return next(ours.length > 0 ? validationProblem(ours) : undefined);
      if (isValidatorError(error) && error.status === 415) {
        return next(new HttpProblem(415, 'unsupported-media-type', `Send ${FORM} or ${JSON_TYPE}.`));
      }
      if (!isValidatorError(error) || error.status !== 400) return next(error);
      const said = new Set(ours.map((e) => `${e.location}:${e.field}`));
      const theirs = fieldErrorsOf(error, route, formats, sent).filter(
        (e) =>
          !said.has(`${e.location}:${e.field}`) &&
          !(e.field === '(path)' && ours.length > 0) &&
          // The validator reads "search[]=x" as the array "search"; the client sent no "search" to blame.
          !(e.location === 'query' && !Object.hasOwn(sent.query, e.field)),
      );
      next(validationProblem([...ours, ...theirs]));
    });
  };
  return responseStep ? [validateRequest, responseStep] : [validateRequest];
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
      if (key === 'format' && typeof value === 'string' && !(value in formats) && !(value in fullFormats)) {
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
