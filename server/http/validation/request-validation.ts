// Why did a request get a 422? This file. express-openapi-validator checks the routed request against the spec,
// configured through its documented options; before it, our own steps make the few checks it cannot (each says
// why); after it, every finding of both becomes one field error in one `validation` problem, built from each
// finding's path and keyword and from the spec model (field-messages.ts words it), never from the validator's
// message text. A request whose fields are valid is then checked as a whole, each check refusing with the kind
// that names its cause (problem-catalog.ts): an If-Match that is no list of ETags, `page` with `after`, a cursor
// this service did not make or one of a walk in another order.
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import type { RequestHandler } from 'express';
import { middleware as openApiValidator } from 'express-openapi-validator';
import { type FieldFormat, MAX_FORMAT_INPUT } from '../../formats.js';
import { metadataFindings, metadataQueryFindings } from '../../metadata/rules.js';
import { type ApiSpec, flatten, type Schema } from '../../spec-model.js';
import { readIfMatch } from '../conventions/conditional.js';
import { type CursorSeal, readCursor, type Sorting } from '../conventions/cursor.js';
import { idCursorProblem } from '../conventions/id-cursor.js';
import { pageWithCursorProblem } from '../conventions/pagination.js';
import { type FieldError, HttpProblem, validationProblem } from '../problems/problem.js';
import { requestActor } from '../routing/request-cause.js';
import {
  type Chain,
  type ErrorStep,
  extend,
  type KeyedRequest,
  type Step,
  type ValidatedRequest,
} from '../routing/request-context.js';
import { isInteger, type Route, type RouteTable } from '../routing/routes.js';
import { type Finding, fieldMessage, type MessageContext, unknownParameterMessage } from './field-messages.js';
import { type IntegerRule, integerParameterProblem, integerRuleOf, readFormInteger } from './integers.js';
import { acceptedBodies, FORM, JSON_TYPE } from './media-types.js';

/** The error express-openapi-validator passes on (its README: `err.status`, `err.errors`). */
interface ValidatorError {
  status: number;
  errors: Array<{ path: string; message: string; errorCode?: string }>;
}

function isValidatorError(error: unknown): error is ValidatorError {
  const candidate = error as Partial<ValidatorError> | null;
  return typeof candidate?.status === 'number' && Array.isArray(candidate.errors);
}

/** Each route's checks against the spec, prepared once for a spec: an app, and the warm-up before it, use them. */
export interface RequestValidation {
  /**
   * Once the body is read and the scope checked: the request against the spec (422), made the validated request
   * a handler receives; `cursors` opens a list's cursor, to check it against the walk it is sent with, and seals
   * those its links carry.
   */
  validate(chain: Chain<KeyedRequest>, route: Route, cursors: CursorSeal): Chain<ValidatedRequest>;
}

/** The request once our own checks have looked at it: what they found, for the validator's findings to join. */
type Found = KeyedRequest & { findings: FieldError[] };

/** The integer rules of a route's parameters and form fields, by name, picked from its schemas once. */
interface IntegerRules {
  /** Path and query parameters the spec types as integers. */
  parameters: Array<{ name: string; in: 'path' | 'query'; rule: IntegerRule }>;
  /** Fields of the form body that the spec types as integers (form values arrive as text). */
  formFields: Array<{ name: string; rule: IntegerRule }>;
  of(field: string): IntegerRule | undefined;
}

function integerRulesOf(route: Route): IntegerRules {
  const parameters = route.parameters.flatMap((p) =>
    (p.in === 'path' || p.in === 'query') && p.integer
      ? [{ name: p.name, in: p.in, rule: integerRuleOf(p.schema) }]
      : [],
  );
  const form = route.bodies[FORM];
  const formFields = Object.entries((form?.properties ?? {}) as Record<string, Schema>)
    .filter(([, schema]) => isInteger(flatten(schema)))
    .map(([name, schema]) => ({ name, rule: integerRuleOf(flatten(schema)) }));
  const byName = new Map<string, IntegerRule>();
  for (const { name, rule } of formFields) byName.set(name, rule);
  for (const { name, rule } of parameters) byName.set(name, rule);
  // Header parameters are never integers here; the rule of an integer parameter of that name, as before.
  for (const p of route.parameters) if (p.integer && !byName.has(p.name)) byName.set(p.name, integerRuleOf(p.schema));
  return { parameters, formFields, of: (field) => byName.get(field) };
}

/**
 * The validator of each resource of the spec, with our steps around it. A spec naming a format that nobody validates
 * fails here, at start. The validator compiles an operation's schemas when its first request arrives (its API has
 * no way to compile them sooner): server/warm-up.ts sends that request before the service listens.
 */
export function prepareValidation(
  spec: ApiSpec,
  routes: RouteTable,
  formats: Record<string, FieldFormat>,
  { validateResponses = false } = {},
): RequestValidation {
  refuseUnknownFormats(spec, formats);
  const validatorFormats = Object.fromEntries(
    Object.entries(formats).map(([name, format]) => [
      name,
      {
        type: 'string' as const,
        validate: (value: string) => value.length <= MAX_FORMAT_INPUT && format.validate(value),
      },
    ]),
  );
  // One validator per resource (`/spaces` and `/spaces/{id}`; `/webhook-endpoints` and its eight paths): each
  // instance compiles the OpenAPI 3.1 schema in its constructor whatever validateApiSpec says (about 50 ms), so 6
  // start in less CPU than 20, one per path; one for the whole spec costs more than either, as what an instance
  // compiles grows faster than the document it is given (scripts/bench/README.md, "Cold start").
  const byResource = new Map<string, string[]>();
  for (const { template } of routes.paths) {
    const resource = resourceOf(template);
    const templates = byResource.get(resource) ?? [];
    templates.push(template);
    byResource.set(resource, templates);
  }
  const validators = new Map(
    [...byResource].map(([resource, templates]) => [
      resource,
      openApiValidator({
        // Only this resource's paths: the validator then finds a request's operation among a few paths, not all
        // of them (Express's router has found it already), and loads only what they refer to. A copy: the
        // validator edits the document it is given. Without responses unless they are validated (tests): each
        // request validator Ajv compiles carries the document it was given, and Ajv walks all of it for every
        // one; the responses were three quarters of that walk (a start: 2.5 s of CPU until ready, now 1.75 s).
        apiSpec: spec.pathsDocument(templates, { withResponses: validateResponses }) as never,
        // Any other spec is checked against the OpenAPI schema before the app serves anything (ApiSpec.bundled).
        validateApiSpec: !spec.bundled,
        // Unknown query parameters are ours (unknownQueryParameters): the validator stops at the first one and
        // says so without the request's other findings.
        validateRequests: { allowUnknownQueryParameters: true, allErrors: true },
        validateResponses: validateResponses ? { allErrors: true } : false,
        // The scope each operation declares is a step of its own before this one (scopes.ts requireScopes).
        validateSecurity: false,
        formats: validatorFormats,
        // No operation takes multipart bodies (body.ts refuses them with 415 before this step): no multer step.
        fileUploader: false,
        // References resolved once, as the document is loaded: what the validator compiles from it holds less
        // heap than from its default (bundle) mode.
        $refParser: { mode: 'dereference' },
      }) as RequestHandler[],
    ]),
  );
  return {
    validate(chain, route, cursors) {
      const validator = validators.get(resourceOf(route.template));
      if (!validator) throw new Error(`no validator for ${route.template}`);
      const integers = integerRulesOf(route);
      return (
        chain
          .step(findBeforeValidating(route, integers))
          .use(...validator)
          // Only on the validator's error: a request it passes goes on to acceptValidFields.
          .onError(oneProblemOfAllFindings(route, formats, integers))
          .step(acceptValidFields(route, cursors))
      );
    },
  };
}

/** The resource a path template belongs to: its first segment (`/webhook-endpoints/{id}/test` → `/webhook-endpoints`). */
function resourceOf(template: string): string {
  return `/${template.split('/')[1] ?? ''}`;
}

/** Before the validator: the checks it cannot make, kept until it has had its say. */
function findBeforeValidating(route: Route, integers: IntegerRules): Step<KeyedRequest, Found> {
  return (req, _res, known) => {
    const sent = { path: known.path, query: known.sent, body: req.body as unknown };
    const findings = unknownQueryParameters(route, sent.query);
    findings.push(...integerParameters(integers, sent));
    findings.push(...unstorableText(sent.body));
    findings.push(...metadataOf(route, sent));
    if (integers.formFields.length > 0 && req.is(FORM)) findings.push(...formIntegers(integers, req.body));
    return extend(known, { findings });
  };
}

/**
 * The validator found nothing: a request is valid if our checks found nothing either, and the request as a whole
 * passes the checks of its parameters together (If-Match, `page` with `after`, the cursor); then it is the
 * validated request, each value read once: path and query as the validator typed them (the spec's defaults
 * filled in), the cursor opened, If-Match read into the versions it accepts.
 */
function acceptValidFields(route: Route, cursors: CursorSeal): Step<Found, ValidatedRequest> {
  const pageAndCursor = has(route, 'query', 'page') && has(route, 'query', 'after');
  return (req, _res, known) => {
    const { findings, sent, account, requestId } = known;
    if (findings.length > 0) throw validationProblem(findings);
    const path = valuesOf(route.pathNames, req.params);
    const query = valuesOf(route.queryNames, req.query);
    const headers: Record<string, string | undefined> = {};
    for (const { name, lowercase } of route.headerNames) headers[name] = req.headers[lowercase] as string | undefined;
    let expected: ValidatedRequest['expected'];
    if (route.takesIfMatch) {
      const read = readIfMatch(headers['If-Match'], Number(path.id));
      if (read instanceof HttpProblem) throw read;
      expected = read;
    }
    if (pageAndCursor) {
      const problem = pageWithCursorProblem(sent);
      if (problem) throw problem;
    }
    const validated: ValidatedRequest = {
      route,
      account,
      requestId,
      path,
      query,
      headers,
      ...(expected === undefined ? {} : { expected }),
      body: req.body ?? {},
      url: { path: `${req.baseUrl}${req.path}`, sent },
      actor: requestActor(account, req),
    };
    return route.cursor ? withCursors(validated, route.cursor, cursors) : validated;
  };
}

/**
 * A list's cursor opened, once (the handler is handed what is inside), and checked against the walk it is sent
 * with; and the seal of the cursors its links carry.
 */
async function withCursors(
  request: ValidatedRequest,
  kind: NonNullable<Route['cursor']>,
  cursors: CursorSeal,
): Promise<ValidatedRequest> {
  const after = request.query.after;
  if (typeof after === 'string' && after !== '') {
    const opened = await cursors.open(after);
    const problem =
      kind === 'list-cursor'
        ? readCursor(opened, sortingOf(request.query))
        : idCursorProblem(opened, request.url.path, request.url.sent);
    if (problem instanceof HttpProblem) throw problem;
    request.query.after = opened;
  }
  // The key is needed only when a link is sealed: when it cannot be had now (made on its first use, so not on
  // storage turned read-only; a database outage), a page without a next link is still answered, and one that
  // needs it fails with the key's error, as before the seal moved here.
  request.url.seal = await cursors.sealer().catch((error: unknown) => (): never => {
    throw error;
  });
  return request;
}

/** The named values of `from`, in one object (those not sent as undefined). */
function valuesOf(names: string[], from: Record<string, unknown>): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const name of names) values[name] = from[name];
  return values;
}

/** Whether the route takes the parameter. */
function has(route: Route, where: Route['parameters'][number]['in'], name: string): boolean {
  return route.parameters.some((p) => p.in === where && p.name === name);
}

/** The order of the walk the query asks for (the validator has filled in the spec's defaults). */
function sortingOf(query: Record<string, unknown>): Sorting {
  return { sortBy: query.sort_by === 'name' ? 'name' : 'id', sort: query.sort === 'asc' ? 'asc' : 'desc' };
}

/** The validator's findings, joined with ours into one problem in our words. */
function oneProblemOfAllFindings(
  route: Route,
  formats: Record<string, FieldFormat>,
  integers: IntegerRules,
): ErrorStep<Found> {
  return (error, req, _res, known, next) => {
    if (!isValidatorError(error)) return next(error);
    if (error.status === 415) {
      const sent = req.get('content-type');
      return next(
        new HttpProblem(
          'unsupported-media-type',
          `${sent ? `Content-Type "${sent}" is not accepted here. ` : ''}${acceptedBodies(Object.keys(route.bodies))}`,
        ),
      );
    }
    if (error.status !== 400) return next(error);
    const ours = known.findings;
    const sent = { path: known.path, query: known.sent, body: req.body as unknown };
    const said = new Set(ours.map((e) => `${e.location}:${e.field}`));
    const saidMetadata = new Set(ours.filter((e) => isMetadataField(e.field)).map((e) => e.location));
    const theirs = fieldErrorsOf(error, route, formats, integers, sent, req.is(FORM) ? FORM : JSON_TYPE).filter(
      (e) =>
        !said.has(`${e.location}:${e.field}`) &&
        !(isMetadataField(e.field) && saidMetadata.has(e.location)) &&
        !(e.field === '(path)' && ours.length > 0) &&
        // The validator reads "search[]=x" as the array "search"; the client sent no "search" to blame.
        !(e.location === 'query' && !Object.hasOwn(sent.query, e.field)),
    );
    next(validationProblem([...ours, ...theirs]));
  };
}

/**
 * Text the databases cannot store as sent, in any body field of any operation (the spec's patterns say nothing of
 * it; the one text query parameter, search, has a pattern that refuses every control character):
 * PostgreSQL refuses U+0000 in text (a 500 otherwise), and an unpaired UTF-16 surrogate, which JSON can carry
 * ("\ud800"), would come back from either engine as a replacement character.
 */
const UNSTORABLE_TEXT_MESSAGE =
  'must not contain U+0000 (NUL) or an unpaired UTF-16 surrogate: the database cannot store them';

const unstorable = (value: unknown): boolean =>
  typeof value === 'string'
    ? value.includes('\u0000') || !value.isWellFormed()
    : Array.isArray(value)
      ? value.some(unstorable)
      : typeof value === 'object' && value !== null && Object.values(value).some(unstorable);

function unstorableText(values: unknown): FieldError[] {
  if (typeof values !== 'object' || values === null) return [];
  return (
    Object.entries(values)
      // metadata's own check names the key (metadataOf).
      .filter(([field]) => field !== 'metadata')
      .filter(([field, value]) => unstorable(value) || unstorable(field))
      .map(([field]) => ({ location: 'body' as const, field, message: UNSTORABLE_TEXT_MESSAGE }))
  );
}

/**
 * A route's metadata as sent, in a body (an object field `metadata`) or in a list's filter (`metadata[key]` query
 * parameters), checked by the metadata rules, which name each bad key (`metadata[key]`): the validator's own
 * findings on it are left out (oneProblemOfAllFindings), as they name the field alone.
 */
function metadataOf(route: Route, sent: { query: Record<string, unknown>; body: unknown }): FieldError[] {
  const findings: FieldError[] = [];
  if (takesMetadataQuery(route)) findings.push(...metadataQueryFindings(sent.query));
  const body = sent.body as Record<string, unknown> | undefined;
  const takesMetadata = Object.values(route.bodies).some(
    (schema) => typeof schema.properties === 'object' && schema.properties !== null && 'metadata' in schema.properties,
  );
  if (takesMetadata && typeof body === 'object' && body !== null && Object.hasOwn(body, 'metadata')) {
    findings.push(...metadataFindings(body.metadata));
  }
  return findings;
}

const takesMetadataQuery = (route: Route) => route.parameters.some((p) => p.in === 'query' && p.name === 'metadata');
const isMetadataField = (field: string) => field === 'metadata' || /^metadata[.[]/.test(field);

/** The validator is told to allow unknown query parameters (prepareValidation says why): named here. */
function unknownQueryParameters(route: Route, sent: Record<string, unknown>): FieldError[] {
  const known = route.queryNames;
  // `metadata[key]` parameters are the metadata filter's (deepObject), checked by metadataOf.
  const metadataQuery = takesMetadataQuery(route);
  return Object.keys(sent)
    .filter((name) => !known.includes(name) && !(metadataQuery && /^metadata\[.*\]$/s.test(name)))
    .map((name) => ({ location: 'query', field: name, message: unknownParameterMessage(known) }));
}

/**
 * The validator coerces path and query text to the schema's types, and so reads "1e3" or "01" as an integer and
 * 400 nines as Infinity: an id or a page number has one spelling, judged here as text.
 */
function integerParameters(
  integers: IntegerRules,
  sent: { path: Record<string, string>; query: Record<string, unknown> },
): FieldError[] {
  return integers.parameters.flatMap((p) => {
    const value = p.in === 'path' ? sent.path[p.name] : sent.query[p.name];
    const message = typeof value === 'string' ? integerParameterProblem(value, p.rule) : undefined;
    return message ? [{ location: p.in, field: p.name, message }] : [];
  });
}

/**
 * Form values are text, and the validator's coercion of bodies would also accept JSON's {"color": "3"}: the spec's
 * integer fields of a form become numbers here, in place, before it reads them. An empty one is a field left blank
 * (what HTML forms and API consoles send), which the spec says counts as not sent.
 */
function formIntegers(integers: IntegerRules, body: Record<string, unknown>): FieldError[] {
  return integers.formFields.flatMap(({ name, rule }) => {
    const value = body[name];
    if (value === '') delete body[name];
    if (typeof value !== 'string' || value === '') return [];
    const read = readFormInteger(value, rule);
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
 * The validator's Ajv only warns about a format it does not know, when it first compiles a schema with it, and
 * then accepts any value: a resource module left out of the app would silently drop its field rules. Refused at
 * start instead.
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

/** The field's schema in the spec model, by where it was sent: what the finding's words are made of. */
function schemaOf(
  route: Route,
  location: FieldError['location'],
  field: string,
  mediaType: string,
): Schema | undefined {
  if (location === 'body') {
    const body = route.bodies[mediaType] ?? route.bodies[JSON_TYPE];
    if (field === '(body)') return body;
    const property = (body?.properties as Record<string, Schema> | undefined)?.[field];
    return property && flatten(property);
  }
  const where = location === 'header' ? 'header' : location;
  return route.parameters.find((p) => p.in === where && p.name.toLowerCase() === field.toLowerCase())?.schema;
}

/** Turns the validator's findings (each a path such as /body/name and a keyword) into one field error per field. */
function fieldErrorsOf(
  error: ValidatorError,
  route: Route,
  formats: Record<string, FieldFormat>,
  integers: IntegerRules,
  sent: { path: Record<string, string>; query: Record<string, unknown>; body: unknown },
  mediaType: string,
): FieldError[] {
  const sentValue = (location: FieldError['location'], field: string) => {
    const values = location === 'path' ? sent.path : location === 'query' ? sent.query : sent.body;
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
    if (location === 'header') field = route.parameters.find((p) => p.name.toLowerCase() === field)?.name ?? field;
    // Anything else is about the request line itself (e.g. a malformed percent-escape in the path).
    const at = location ?? 'path';
    const keyword = location ? (item.errorCode?.split('.')[0] ?? '') : '';
    const key = `${at}\u0000${field}`;
    const entry = byField.get(key) ?? { location: at, field, findings: [] };
    const schema = location ? schemaOf(route, at, field, mediaType) : undefined;
    entry.findings.push({ field, keyword, value: sentValue(at, field), ...(schema ? { schema } : {}) });
    byField.set(key, entry);
  }
  const body = route.bodies[JSON_TYPE];
  const messages: MessageContext = {
    formats,
    acceptedFields: Object.keys(body?.properties ?? {}),
    rejectedFields: (body?.['x-rejected-fields'] ?? {}) as Record<string, string>,
    integerRule: (field) => integers.of(field),
  };
  return [...byField.values()].map(({ location, field, findings }) => ({
    location,
    field,
    message: fieldMessage(findings, messages),
  }));
}
