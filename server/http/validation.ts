// express-openapi-validator, set up for this API: requests validated against the spec with every error
// reported (and responses too, where asked), custom formats from the field rules, and its findings turned
// into field errors a client can act on.
import type { Express, RequestHandler } from 'express';
import { middleware as openApiValidator } from 'express-openapi-validator';
import type { FieldFormat } from '../formats.js';
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
): FieldError[] {
  const findings = error.errors.map((item) => {
    const [, where = '', ...rest] = item.path.split('/');
    const location = LOCATIONS[where];
    // Anything else is about the request line itself (e.g. a malformed percent-escape in the path).
    if (!location) return { location: 'path' as const, field: '(path)', keyword: '', raw: item.message };
    const field = rest.map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~')).join('.') || `(${where})`;
    return { location, field, keyword: item.errorCode?.split('.')[0] ?? '', raw: item.message };
  });
  const key = (f: { location: string; field: string }) => `${f.location}\u0000${f.field}`;
  // A pattern in the spec only restates part of a format (for tools that do not know the format): when the
  // format failed too, its message says it all.
  const formatFailed = new Set(findings.filter((f) => f.keyword === 'format').map(key));
  const byField = new Map<string, FieldError>();
  for (const finding of findings) {
    if (finding.keyword === 'pattern' && formatFailed.has(key(finding))) continue;
    const message = messageFor(finding.keyword, finding.raw, finding.field, spec, route, formats);
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
): string {
  switch (keyword) {
    case 'required':
      return 'is required';
    case 'additionalProperties': {
      const schema = route && spec.bodySchema(route.operation, 'application/json');
      const specific = (schema?.['x-rejected-fields'] as Record<string, string> | undefined)?.[field];
      const accepted = Object.keys(schema?.properties ?? {});
      return specific ?? `is not a field of this operation; accepted: ${accepted.join(', ')}`;
    }
    case 'format': {
      const name = /format "([^"]+)"/.exec(raw)?.[1] ?? '';
      return formats[name]?.message ?? raw;
    }
    case 'type': {
      const types = raw.replace(/^must be /, '').split(',');
      return `must be ${types.map(article).join(' or ')}`;
    }
    default:
      return raw;
  }
}
