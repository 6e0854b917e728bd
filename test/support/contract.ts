// Checks every response a test receives against the spec, independently of the server's own response
// validation (which cannot see 401, 404 or 405 answered before it runs): the status is documented for the
// operation, the content type is documented, the body matches its schema and documented headers are present.
import { Ajv2020 } from 'ajv/dist/2020.js';
import formats from 'ajv-formats';
import { FORMATS } from '../../server/app.js';
import { ApiSpec, type OperationObject, type SchemaObject } from '../../server/spec.js';

export const spec = ApiSpec.load();

// OpenAPI 3.1 schemas are JSON Schema 2020-12; the custom formats are checked by the resource modules' own rules.
const ajv = new Ajv2020({ strict: false, allErrors: true });
// ajv-formats is CommonJS: its default export arrives as the module object under NodeNext typing.
(formats as unknown as { default: (a: Ajv2020) => void }).default(ajv);
for (const [name, format] of Object.entries(FORMATS)) ajv.addFormat(name, format.validate);
ajv.addSchema(spec.document, 'spec');

type ResponseObject = {
  headers?: Record<string, { required?: boolean; schema?: SchemaObject; $ref?: string }>;
  content?: Record<string, { schema: object }>;
};

const PROBLEM = { $ref: 'spec#/components/schemas/problem' };

const compiled = new Map<string, ReturnType<typeof ajv.compile>>();

function validate(schema: object, value: unknown, what: string): void {
  // Schemas taken out of the spec refer to it with local refs ("#/components/..."): point those at it.
  const source = JSON.stringify(schema).replaceAll('"$ref":"#/', '"$ref":"spec#/');
  const check = compiled.get(source) ?? ajv.compile(JSON.parse(source));
  compiled.set(source, check);
  if (!check(value)) {
    throw new Error(`${what} does not match the spec: ${ajv.errorsText(check.errors)}\n${JSON.stringify(value)}`);
  }
}

/** A header arrives as text; a header the spec types as a number is checked as one. */
function headerValue(schema: SchemaObject, value: string): unknown {
  const type = spec.resolve(schema).type;
  return (type === 'integer' || type === 'number') && /^-?\d+(\.\d+)?$/.test(value) ? Number(value) : value;
}

/** Throws when the response breaks the spec. Reads the body from a clone, so the caller can still read it. */
export async function checkResponse(method: string, url: string, response: Response): Promise<void> {
  const { pathname } = new URL(url);
  const what = `${method} ${pathname} -> ${response.status}`;
  if (!pathname.startsWith(spec.basePath)) return;
  const match = spec.match(method, pathname.slice(spec.basePath.length));
  const mediaType = response.headers.get('content-type')?.split(';')[0]?.trim() ?? '';
  const text = await response.clone().text();

  if (!response.headers.get('x-request-id')) throw new Error(`${what}: no X-Request-Id header`);
  if (match.kind !== 'operation') {
    if (mediaType !== 'application/problem+json') throw new Error(`${what}: content type ${mediaType}`);
    validate(PROBLEM, JSON.parse(text), what);
    return;
  }

  const operation: OperationObject = match.route.operation;
  const documented = operation.responses[String(response.status)];
  if (!documented) {
    throw new Error(`${what}: status not documented for ${operation.operationId}\n${text}`);
  }
  const declared = spec.resolve(documented) as ResponseObject;
  for (const [name, header] of Object.entries(declared.headers ?? {})) {
    const resolved = spec.resolve(header);
    const value = response.headers.get(name);
    if (resolved.required && value === null) throw new Error(`${what}: documented header ${name} missing`);
    if (value !== null && resolved.schema)
      validate(resolved.schema, headerValue(resolved.schema, value), `${what} header ${name}`);
  }
  if (!declared.content) {
    if (text !== '') throw new Error(`${what}: body where the spec documents none: ${text}`);
    return;
  }
  const content = declared.content[mediaType];
  if (!content) {
    throw new Error(
      `${what}: content type "${mediaType}" not documented (${Object.keys(declared.content).join(', ')})`,
    );
  }
  validate(content.schema, JSON.parse(text), what);
}
