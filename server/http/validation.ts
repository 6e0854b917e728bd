// express-openapi-validator, set up for this API: requests validated against the spec with every error
// reported (and responses too, where asked), custom formats from the field rules, and its findings turned
// into field errors a client can act on.

import { fullFormats } from 'ajv-formats/dist/formats.js';
import type { Express, RequestHandler } from 'express';
import { middleware as openApiValidator } from 'express-openapi-validator';
import { type FieldFormat, PATTERN_MESSAGES } from '../formats.js';
import type { ApiSpec, Route } from '../spec.js';
import type { FieldError } from './problem.js';

export interface ValidatorError {
  status: number;
  path?: string;
  message: string;
  errors: Array<{ path: string; message: string; errorCode?: string }>;
}

export function isValidatorError(error: unknown): error is ValidatorError {
  const candidate = error as Partial<ValidatorError> | null;
  return typeof candidate?.status === 'number' && Array.isArray(candidate.errors);
}

/** The validator's middleware, with the spec already loaded and checked (not left to the first request). */
export async function createValidator(
  app: Express,
  spec: ApiSpec,
  formats: Record<string, FieldFormat>,
  validateResponses: boolean,
): Promise<RequestHandler[]> {
  refuseUnknownFormats(spec, formats);
  const handlers = openApiValidator({
    apiSpec: structuredClone(spec.document) as never,
    validateApiSpec: true,
    validateRequests: { allowUnknownQueryParameters: true, coerceTypes: false, allErrors: true },
    validateResponses: validateResponses ? { allErrors: true } : false,
    validateSecurity: false,
    formats: Object.fromEntries(
      Object.entries(formats).map(([name, format]) => [name, { type: 'string', validate: format.validate }]),
    ),
  }) as RequestHandler[];
  // The first middleware waits for the spec to load; running it once surfaces a broken spec at start-up.
  const [first] = handlers;
  await new Promise<void>((resolve, reject) => {
    first?.({ app } as never, {} as never, (error?: unknown) => (error ? reject(error) : resolve()));
  });
  return handlers;
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

const article = (type: string) =>
  type === 'integer' || type === 'object' || type === 'array' ? `an ${type}` : type === 'null' ? 'null' : `a ${type}`;

/** Turns the validator's findings into one field error per bad field, with messages a person can act on. */
export function fieldErrorsOf(
  error: ValidatorError,
  spec: ApiSpec,
  route: Route | undefined,
  formats: Record<string, FieldFormat>,
  /** What the client sent, by location: a format may have a more precise message for the value. */
  sent: Partial<Record<FieldError['location'], unknown>> = {},
): FieldError[] {
  const sentValue = (location: FieldError['location'], field: string) => {
    const values = sent[location];
    return typeof values === 'object' && values !== null ? (values as Record<string, unknown>)[field] : undefined;
  };
  const findings = error.errors.map((item) => {
    const [, where = '', ...rest] = item.path.split('/');
    const location = LOCATIONS[where];
    // Anything else is about the request line itself (e.g. a malformed percent-escape in the path).
    if (!location) return { location: 'path' as const, field: '(path)', keyword: '', raw: item.message };
    let field = rest.map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~')).join('.') || `(${where})`;
    // Header names arrive in lowercase; the spec's spelling (Idempotency-Key) is the one a client knows.
    if (location === 'header') field = route?.parameters.find((p) => p.name.toLowerCase() === field)?.name ?? field;
    return { location, field, keyword: item.errorCode?.split('.')[0] ?? '', raw: item.message };
  });
  const key = (f: { location: string; field: string }) => `${f.location}\u0000${f.field}`;
  // A pattern in the spec only restates part of a format (for tools that do not know the format): when the
  // format failed too, its message says it all.
  const formatFailed = new Set(findings.filter((f) => f.keyword === 'format').map(key));
  const byField = new Map<string, FieldError>();
  for (const finding of findings) {
    if (finding.keyword === 'pattern' && formatFailed.has(key(finding))) continue;
    const value = sentValue(finding.location, finding.field);
    const message = messageFor(finding.keyword, finding.raw, finding.field, spec, route, formats, value);
    const entry = byField.get(key(finding));
    if (entry) entry.message = `${entry.message}; ${message}`;
    else byField.set(key(finding), { location: finding.location, field: finding.field, message });
  }
  return [...byField.values()];
}

function messageFor(
  keyword: string,
  raw: string,
  field: string,
  spec: ApiSpec,
  route: Route | undefined,
  formats: Record<string, FieldFormat>,
  value: unknown,
): string {
  switch (keyword) {
    case 'required':
      return 'is required';
    case 'additionalProperties': {
      const schema = route && spec.bodySchema(route.operation, 'application/json');
      const rejected = (schema?.['x-rejected-fields'] ?? {}) as Record<string, string>;
      // Own entries only: a field named "constructor" or "__proto__" must not find Object's.
      const specific = Object.hasOwn(rejected, field) ? rejected[field] : undefined;
      const accepted = Object.keys(schema?.properties ?? {});
      return specific ?? `is not a field of this operation; accepted: ${accepted.join(', ')}`;
    }
    case 'format': {
      const name = /format "([^"]+)"/.exec(raw)?.[1] ?? '';
      const format = formats[name];
      return (typeof value === 'string' ? format?.hint?.(value) : undefined) ?? format?.message ?? raw;
    }
    case 'pattern': {
      const pattern = /pattern "(.*)"$/.exec(raw)?.[1] ?? '';
      return PATTERN_MESSAGES[pattern] ?? raw;
    }
    case 'type': {
      const types = raw.replace(/^must be /, '').split(',');
      return `must be ${types.map(article).join(' or ')}`;
    }
    default:
      return raw;
  }
}
