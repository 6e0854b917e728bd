// The bundled spec (generated/openapi.yaml, and the same document as JSON in generated/openapi.json, which
// starts the service 0.3 s sooner than parsing the YAML), loaded once: served as-is, handed to the validator,
// and read through the shared spec model (server/spec-model.ts) for the route table, parameter types and body
// schemas, so that none of these is written twice.
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { buildModel, flatten, type Operation, type Schema, type SpecModel } from './spec-model.js';

export type SchemaObject = {
  type?: string | string[];
  properties?: Record<string, SchemaObject>;
  default?: unknown;
  $ref?: string;
  [key: string]: unknown;
};

export interface ParameterObject {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  schema: SchemaObject;
}

export interface OperationObject {
  operationId: string;
  parameters?: ParameterObject[];
  requestBody?: { content: Record<string, { schema: SchemaObject }> };
  responses: Record<string, unknown>;
}

export interface OpenApiDocument {
  openapi: string;
  servers?: Array<{ url: string }>;
  paths: Record<string, Record<string, unknown>>;
  [key: string]: unknown;
}

/** What a request needs to know of one parameter, read once from the spec. */
export interface RouteParameter {
  name: string;
  in: ParameterObject['in'];
  /** The schema (through $refs and allOf) is an integer: sent as text, read as a number. */
  integer: boolean;
  /** The integer's range, checked on the text before it becomes a number (server/http/integers.ts). */
  bounds: IntegerBounds;
}

export interface IntegerBounds {
  minimum?: number;
  maximum?: number;
  /** The spec's `enum`: only these values of the range are allowed. */
  allowed?: number[];
}

export interface Route {
  operation: OperationObject;
  /** The same operation as the spec model reads it (schemas dereferenced): what the response checks judge by. */
  model: Operation;
  method: string;
  template: string;
  /** The path's shared parameters, then the operation's own. */
  parameters: RouteParameter[];
  queryNames: string[];
  /** Fields of the form body that the spec types as integers (form values arrive as text), with their ranges. */
  formIntegerFields: Array<{ name: string; bounds: IntegerBounds }>;
  /** The JSON body's schema, dereferenced and flattened (its fields, `x-rejected-fields`), where there is one. */
  jsonBody?: Schema;
}

export type RouteMatch =
  | { kind: 'operation'; route: Route; pathParams: Record<string, string> }
  | { kind: 'method-not-allowed'; allow: string[] }
  | { kind: 'not-found' };

/** Percent-decodes a path segment; a malformed escape (e.g. "%FF") is left as sent, for validation to reject. */
function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** The methods of a path as `Allow` lists them: HEAD next to GET. */
function allowed(methods: string[]): string[] {
  if (!methods.includes('GET') || methods.includes('HEAD')) return methods;
  return methods.flatMap((method) => (method === 'GET' ? ['GET', 'HEAD'] : [method]));
}

const BUNDLED_YAML = new URL('../generated/openapi.yaml', import.meta.url);
const BUNDLED_JSON = new URL('../generated/openapi.json', import.meta.url);
let bundledSpec: ApiSpec | undefined;

export class ApiSpec {
  readonly document: OpenApiDocument;
  readonly json: string;
  readonly basePath: string;
  /** The operations, parameters, bodies and responses, with schemas dereferenced. */
  readonly model: SpecModel;
  private yamlText: string | (() => string);
  private readonly routes: Array<{ pattern: RegExp; names: string[]; byMethod: Map<string, Route> }> = [];

  /**
   * `bundled`: the committed generated/ spec, which CI checks (Redocly's lint, the drift check, the tests), so
   * the validator need not check it against the OpenAPI schema again at every start.
   */
  constructor(
    yamlText: string | (() => string),
    document?: OpenApiDocument,
    readonly bundled = false,
  ) {
    this.yamlText = yamlText;
    this.document = document ?? (parse(this.yaml) as OpenApiDocument);
    this.json = JSON.stringify(this.document);
    this.basePath = this.document.servers?.[0]?.url ?? '';
    this.model = buildModel(this.document);
    for (const [template, methods] of this.model.paths) {
      const names: string[] = [];
      const source = template
        .split('/')
        .map((segment) => {
          const param = /^\{(.+)\}$/.exec(segment);
          if (!param?.[1]) return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
          names.push(param[1]);
          return '([^/]+)';
        })
        .join('/');
      const byMethod = new Map<string, Route>();
      for (const method of methods) {
        const operation = this.model.operations.find((op) => op.path === template && op.method === method);
        if (!operation) continue;
        const parameters = [...operation.pathParams, ...operation.queryParams, ...operation.headerParams].map((p) => ({
          name: p.name,
          in: p.in,
          integer: isInteger(p.schema),
          bounds: boundsOf(p.schema),
        }));
        const form = operation.body?.content['application/x-www-form-urlencoded'];
        const json = operation.body?.content['application/json'];
        byMethod.set(method, {
          operation: operation.object as unknown as OperationObject,
          model: operation,
          method,
          template,
          parameters,
          queryNames: operation.queryParams.map((p) => p.name),
          formIntegerFields: Object.entries((flatten(form ?? {}).properties ?? {}) as Record<string, Schema>)
            .filter(([, schema]) => isInteger(schema))
            .map(([name, schema]) => ({ name, bounds: boundsOf(schema) })),
          ...(json ? { jsonBody: flatten(json) } : {}),
        });
      }
      this.routes.push({ pattern: new RegExp(`^${source}$`), names, byMethod });
    }
  }

  /** The spec as YAML, as written (the bundled spec's file is read when first asked for). */
  get yaml(): string {
    if (typeof this.yamlText === 'function') this.yamlText = this.yamlText();
    return this.yamlText;
  }

  /** The bundled spec, read once per process (it does not change while the process runs). */
  static load(): ApiSpec {
    bundledSpec ??= new ApiSpec(
      () => readFileSync(BUNDLED_YAML, 'utf8'),
      JSON.parse(readFileSync(BUNDLED_JSON, 'utf8')) as OpenApiDocument,
      true,
    );
    return bundledSpec;
  }

  /** Every operation of the spec, as a route. */
  get operations(): Route[] {
    return this.routes.flatMap(({ byMethod }) => [...byMethod.values()]);
  }

  /** Finds the operation for a method and a path below the base path (e.g. "/domains/1"). */
  match(method: string, path: string): RouteMatch {
    for (const { pattern, names, byMethod } of this.routes) {
      const found = pattern.exec(path);
      if (!found) continue;
      // HEAD is GET without the body (RFC 9110 §9.3.2), wherever GET is.
      const upper = method.toUpperCase();
      const route = byMethod.get(upper) ?? (upper === 'HEAD' ? byMethod.get('GET') : undefined);
      if (!route) return { kind: 'method-not-allowed', allow: allowed([...byMethod.keys()]) };
      const pathParams = Object.fromEntries(names.map((name, i) => [name, decodeSegment(found[i + 1] ?? '')]));
      return { kind: 'operation', route, pathParams };
    }
    return { kind: 'not-found' };
  }

  /** Follows local `$ref`s (`#/components/...`) until a plain object is reached. */
  resolve<T>(node: T): T {
    let current: unknown = node;
    for (let hops = 0; hops < 32; hops++) {
      const ref = (current as { $ref?: unknown } | null)?.$ref;
      if (typeof ref !== 'string') return current as T;
      current = ref
        .slice(2)
        .split('/')
        .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
        .reduce<unknown>((at, key) => (at as Record<string, unknown> | undefined)?.[key], this.document);
    }
    throw new Error(`$ref chain too deep at ${JSON.stringify(node)}`);
  }
}

/** Whether a dereferenced schema (through allOf) allows integers. */
function isInteger(schema: Schema): boolean {
  const { type } = flatten(schema);
  return type === 'integer' || (Array.isArray(type) && type.includes('integer'));
}

/** The range of a dereferenced integer schema (through allOf), where it states one. */
function boundsOf(schema: Schema): IntegerBounds {
  const flat = flatten(schema);
  const pick = (key: 'minimum' | 'maximum') => (typeof flat[key] === 'number' ? (flat[key] as number) : undefined);
  const allowed = Array.isArray(flat.enum) ? (flat.enum as unknown[]).filter((v) => typeof v === 'number') : [];
  return { minimum: pick('minimum'), maximum: pick('maximum'), ...(allowed.length ? { allowed } : {}) };
}
