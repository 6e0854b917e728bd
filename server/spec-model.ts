// The one reading of an OpenAPI 3.x document, shared by the server (ApiSpec below, and its route table in
// server/http/routing/routes.ts), the conformance runner and the tests: operations with dereferenced parameter,
// body and response schemas, their security, and the resources (collection + item paths) in it. It reads any spec, not
// only ours: the runner points it at other deployments' documents.
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { parse } from 'yaml';

export type Schema = Record<string, unknown>;

export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required: boolean;
  schema: Schema;
  /** Parameters that must not be sent together with this one (the spec's `x-excludes`). */
  excludes: string[];
  /** A parameter whose value this one's must be earlier than, when both are sent (the spec's `x-before`). */
  before?: string;
}

export interface ResponseSpec {
  headers: Record<string, { required: boolean; schema?: Schema }>;
  /** Media type → schema; empty when the response has no body. */
  content: Record<string, Schema>;
}

/** One way of proving who you are, read from securitySchemes. */
export type Credential = { kind: 'bearer' } | { kind: 'header'; name: string } | { kind: 'unsupported'; why: string };

export interface Operation {
  /** The operationId, or "METHOD /path" when the spec has none. */
  id: string;
  /** The operation object as the document has it ($refs not followed): summary, tags, x-codeSamples, … */
  object: Record<string, unknown>;
  method: string;
  path: string;
  pathParams: Parameter[];
  queryParams: Parameter[];
  /** Header parameters the operation documents (Idempotency-Key, If-Match, If-None-Match, …). */
  headerParams: Parameter[];
  body?: { required: boolean; content: Record<string, Schema>; examples: Record<string, unknown> };
  responses: Record<string, ResponseSpec>;
  /** Empty: public. Otherwise any one of these credentials is enough. */
  security: Credential[];
  /** The scopes its security requirements declare (`bearerAuth: [domains:read]`); empty when none do. */
  scopes: string[];
}

/** A collection path with a create operation, and its item path (collection + "/{param}"). */
export interface Resource {
  name: string;
  collectionPath: string;
  itemPath: string;
  idParam: string;
  create: Operation;
  list?: Operation;
  show?: Operation;
  remove?: Operation;
  /** PUT and PATCH of the item path. */
  updates: Operation[];
  /**
   * Body fields of the create that the spec says are unique: marked `x-unique: true`, or described as unique
   * ("Unique across the whole service"). Empty when the spec says nothing of the kind.
   */
  uniqueFields: string[];
}

export interface SpecModel {
  document: Record<string, unknown>;
  operations: Operation[];
  resources: Resource[];
  /** Path template → its documented methods (upper case). */
  paths: Map<string, string[]>;
  /** The spec's `webhooks`: each event type → the JSON schema of its payload (dereferenced). */
  webhooks: Map<string, Schema>;
}

export const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

export async function loadSpecText(location: string): Promise<string> {
  if (/^https?:\/\//.test(location)) {
    const response = await fetch(location);
    if (!response.ok) throw new Error(`cannot fetch the spec at ${location}: ${response.status}`);
    return response.text();
  }
  return readFile(location, 'utf8');
}

/** The model of a spec, from its text (YAML or JSON) or its parsed document. */
export function buildModel(source: string | Record<string, unknown>): SpecModel {
  const document = typeof source === 'string' ? (parse(source) as Record<string, unknown>) : source;
  const deref = dereferencer(document);
  const paths = new Map<string, string[]>();
  const operations: Operation[] = [];
  const components = (document.components ?? {}) as { securitySchemes?: Record<string, unknown> };
  const schemes = deref(components.securitySchemes ?? {}) as Record<string, Record<string, string>>;
  const rootSecurity = (document.security ?? []) as Array<Record<string, string[]>>;

  for (const [path, rawItem] of Object.entries((document.paths ?? {}) as Record<string, unknown>)) {
    const item = deref(rawItem) as Record<string, unknown>;
    const shared = (item.parameters ?? []) as Array<Record<string, unknown>>;
    const methods: string[] = [];
    for (const method of METHODS) {
      const raw = item[method] as Record<string, unknown> | undefined;
      if (!raw) continue;
      methods.push(method.toUpperCase());
      // A HEAD beside a GET documents that GET without its body (RFC 9110 §9.3.2): the GET operation serves it,
      // so it is a method of the path but no operation of its own.
      if (method === 'head' && item.get) continue;
      const parameters = mergeParameters(shared, (raw.parameters ?? []) as Array<Record<string, unknown>>);
      const requirements = (raw.security ?? rootSecurity) as Array<Record<string, string[]>>;
      const security = requirements.flatMap((requirement) =>
        Object.keys(requirement).map((name) => credentialOf(schemes[name])),
      );
      const scopes = [...new Set(requirements.flatMap((requirement) => Object.values(requirement).flat()))];
      operations.push({
        id: (raw.operationId as string | undefined) ?? `${method.toUpperCase()} ${path}`,
        object: ((rawItem as Record<string, unknown>)[method] ?? raw) as Record<string, unknown>,
        method: method.toUpperCase(),
        path,
        pathParams: parameters.filter((p) => p.in === 'path'),
        queryParams: parameters.filter((p) => p.in === 'query'),
        headerParams: parameters.filter((p) => p.in === 'header'),
        ...(raw.requestBody ? { body: bodyOf(raw.requestBody as Record<string, unknown>) } : {}),
        responses: responsesOf((raw.responses ?? {}) as Record<string, Record<string, unknown>>),
        security,
        scopes,
      });
    }
    paths.set(path, methods);
  }
  const webhooks = new Map<string, Schema>();
  for (const [type, rawItem] of Object.entries((document.webhooks ?? {}) as Record<string, unknown>)) {
    const post = (deref(rawItem) as { post?: { requestBody?: unknown } }).post;
    const body = deref(post?.requestBody) as { content?: Record<string, { schema?: Schema }> } | undefined;
    const schema = body?.content?.['application/json']?.schema;
    if (schema) webhooks.set(type, schema);
  }
  return { document, operations, resources: resourcesOf(operations), paths, webhooks };
}

function mergeParameters(shared: Array<Record<string, unknown>>, own: Array<Record<string, unknown>>): Parameter[] {
  const byKey = new Map<string, Parameter>();
  for (const p of [...shared, ...own]) {
    const name = p.name as string;
    const where = p.in as Parameter['in'];
    byKey.set(`${where}:${name}`, {
      name,
      in: where,
      required: p.required === true || where === 'path',
      schema: (p.schema ?? {}) as Schema,
      excludes: Array.isArray(p['x-excludes']) ? (p['x-excludes'] as string[]) : [],
      ...(typeof p['x-before'] === 'string' ? { before: p['x-before'] as string } : {}),
    });
  }
  return [...byKey.values()];
}

function credentialOf(scheme: Record<string, string> | undefined): Credential {
  if (scheme?.type === 'http' && scheme.scheme?.toLowerCase() === 'bearer') return { kind: 'bearer' };
  if (scheme?.type === 'apiKey' && scheme.in === 'header' && scheme.name) return { kind: 'header', name: scheme.name };
  return { kind: 'unsupported', why: `security scheme ${JSON.stringify(scheme)} is not supported by the runner` };
}

function bodyOf(body: Record<string, unknown>): NonNullable<Operation['body']> {
  const content: Record<string, Schema> = {};
  const examples: Record<string, unknown> = {};
  for (const [mediaType, media] of Object.entries((body.content ?? {}) as Record<string, Record<string, unknown>>)) {
    content[mediaType] = (media.schema ?? {}) as Schema;
    if (media.example !== undefined) examples[mediaType] = media.example;
  }
  return { required: body.required === true, content, examples };
}

function responsesOf(responses: Record<string, Record<string, unknown>>): Record<string, ResponseSpec> {
  const out: Record<string, ResponseSpec> = {};
  for (const [status, response] of Object.entries(responses)) {
    const headers: ResponseSpec['headers'] = {};
    for (const [name, header] of Object.entries((response.headers ?? {}) as Record<string, Record<string, unknown>>)) {
      headers[name] = {
        required: header.required === true,
        ...(header.schema ? { schema: header.schema as Schema } : {}),
      };
    }
    const content: Record<string, Schema> = {};
    for (const [mediaType, media] of Object.entries(
      (response.content ?? {}) as Record<string, Record<string, unknown>>,
    )) {
      content[mediaType] = (media.schema ?? {}) as Schema;
    }
    out[status] = { headers, content };
  }
  return out;
}

function resourcesOf(operations: Operation[]): Resource[] {
  const resources: Resource[] = [];
  for (const create of operations.filter((op) => op.method === 'POST' && op.pathParams.length === 0)) {
    const itemOps = operations.filter((op) => {
      const match = new RegExp(`^${escapeRegExp(create.path)}/\\{([^}/]+)\\}$`).exec(op.path);
      return match !== null;
    });
    const itemPath = itemOps[0]?.path;
    const idParam = itemPath?.slice(create.path.length + 2, -1);
    if (!itemPath || !idParam) continue;
    const at = (method: string, path: string) => operations.find((op) => op.method === method && op.path === path);
    resources.push({
      name: create.path.replace(/^\//, ''),
      collectionPath: create.path,
      itemPath,
      idParam,
      create,
      list: at('GET', create.path),
      show: at('GET', itemPath),
      remove: at('DELETE', itemPath),
      updates: ['PUT', 'PATCH'].flatMap((method) => at(method, itemPath) ?? []),
      uniqueFields: uniqueFieldsOf(create),
    });
  }
  return resources;
}

function uniqueFieldsOf(create: Operation): string[] {
  const fields = new Set<string>();
  for (const schema of Object.values(create.body?.content ?? {})) {
    for (const [name, property] of Object.entries((flatten(schema).properties ?? {}) as Record<string, Schema>)) {
      const flat = flatten(property);
      const described = typeof flat.description === 'string' && /(?<!not )\bunique\b/i.test(flat.description);
      if (flat['x-unique'] === true || described) fields.add(name);
    }
  }
  return [...fields];
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The keys of a local `$ref` ("#/components/schemas/x"), decoded (JSON Pointer and URI escapes). */
const refPath = (ref: string) =>
  ref
    .slice(2)
    .split('/')
    .map((part) => decodeURIComponent(part).replace(/~1/g, '/').replace(/~0/g, '~'));

/** What a local `$ref` points at in the document. */
function lookup(document: Record<string, unknown>, ref: string): unknown {
  return refPath(ref).reduce<unknown>((at, key) => (at as Record<string, unknown> | undefined)?.[key], document);
}

type RefStep = (ref: string, siblings: Record<string, unknown>, walk: (node: unknown) => unknown) => unknown;

/**
 * The one walk over a document's local `$ref`s: a copy of `node` in which each `{ $ref: "#/…", …siblings }`
 * object is what `atRef` makes of it (with `walk`, to go on through its siblings).
 */
function walkRefs(node: unknown, atRef: RefStep): unknown {
  const walk = (at: unknown): unknown => {
    if (Array.isArray(at)) return at.map(walk);
    if (at === null || typeof at !== 'object') return at;
    const { $ref, ...siblings } = at as Record<string, unknown>;
    if (typeof $ref === 'string' && $ref.startsWith('#/')) return atRef($ref, siblings, walk);
    return Object.fromEntries(Object.entries(at).map(([key, value]) => [key, walk(value)]));
  };
  return walk(node);
}

/**
 * Inlines every local $ref. A cycle would make the schema infinite: the runner's own spec has none, and one
 * that does gets an empty schema (anything goes) at the point where the cycle closes.
 */
function dereferencer(document: Record<string, unknown>): (node: unknown) => unknown {
  const inline = (node: unknown, seen: string[]): unknown =>
    walkRefs(node, (ref, siblings, walk) => {
      if (seen.includes(ref)) return {};
      const target = inline(lookup(document, ref), [...seen, ref]) as Record<string, unknown>;
      return Object.keys(siblings).length ? { ...target, ...(walk(siblings) as object) } : target;
    });
  return (node) => inline(node, []);
}

/**
 * allOf parts merged into one schema (enough for the keyword-per-part style specs use): `properties` merged, and
 * `required` the union of every part's, as allOf means (each part must hold); any other keyword, the last part's.
 */
export function flatten(schema: Schema): Schema {
  const { allOf, ...rest } = schema;
  if (!Array.isArray(allOf)) return schema;
  const merged: Schema = { ...rest };
  for (const part of allOf) {
    const flat = flatten(part as Schema);
    const properties =
      merged.properties || flat.properties
        ? { properties: { ...(merged.properties as object), ...(flat.properties as object) } }
        : {};
    const required =
      merged.required || flat.required
        ? { required: [...new Set([...((merged.required as string[]) ?? []), ...((flat.required as string[]) ?? [])])] }
        : {};
    Object.assign(merged, flat, properties, required);
  }
  return merged;
}

const BUNDLED_YAML = new URL('../generated/openapi.yaml', import.meta.url);
const BUNDLED_JSON = new URL('../generated/openapi.json', import.meta.url);
let bundledSpec: ApiSpec | undefined;

/**
 * The service's spec: the document as served (JSON and YAML), its base path, and its model. The bundled one
 * (generated/openapi.yaml, and the same document as JSON in generated/openapi.json, which starts the service
 * sooner than parsing the YAML) is read once per process.
 */
export class ApiSpec {
  readonly document: Record<string, unknown>;
  readonly json: string;
  readonly basePath: string;
  /** The operations, parameters, bodies and responses, with schemas dereferenced. */
  readonly model: SpecModel;
  private yamlText: string | (() => string);

  /**
   * `bundled`: the committed generated/ spec, which CI checks (Redocly's lint, the drift check, the tests), so
   * the validator need not check it against the OpenAPI schema again at every start.
   */
  constructor(
    yamlText: string | (() => string),
    document?: Record<string, unknown>,
    readonly bundled = false,
  ) {
    this.yamlText = yamlText;
    this.document = document ?? (parse(this.yaml) as Record<string, unknown>);
    this.json = JSON.stringify(this.document);
    this.basePath = (this.document.servers as Array<{ url?: string }> | undefined)?.[0]?.url ?? '';
    this.model = buildModel(this.document);
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
      JSON.parse(readFileSync(BUNDLED_JSON, 'utf8')) as Record<string, unknown>,
      true,
    );
    return bundledSpec;
  }

  /**
   * The document with some of its paths and only the components those paths refer to (directly or through other
   * components; security schemes all, as requirements name them without `$ref`): a copy, for a tool that should
   * read part of the spec (the validator of one resource's routes). `withResponses: false` leaves out each
   * operation's `responses` and what only they refer to, for a tool that reads requests alone.
   */
  pathsDocument(templates: readonly string[], { withResponses = true } = {}): Record<string, unknown> {
    const components = (this.document.components ?? {}) as Record<string, Record<string, unknown>>;
    const kept: Record<string, Record<string, unknown>> = {};
    const seen = new Set<string>();
    const visit = (node: unknown): unknown =>
      walkRefs(node, (ref, siblings, walk) => {
        const [top, kind = '', name = ''] = refPath(ref);
        if (top === 'components' && !seen.has(ref)) {
          seen.add(ref);
          const target = components[kind]?.[name];
          if (target !== undefined) {
            kept[kind] ??= {};
            kept[kind][name] = target;
          }
          visit(target);
        }
        return walk(siblings);
      });
    const all = this.document.paths as Record<string, unknown>;
    const paths = Object.fromEntries(
      templates.map((template) => [template, withResponses ? all[template] : withoutResponses(all[template])]),
    );
    visit(paths);
    if (components.securitySchemes) kept.securitySchemes = components.securitySchemes;
    // Without `webhooks` too: they are requests this service sends, and refer to components these paths may not.
    const { webhooks: _sent, ...served } = this.document;
    return structuredClone({ ...served, paths, components: kept });
  }

  /** Follows local `$ref`s (`#/components/...`) until a plain object is reached. */
  resolve<T>(node: T): T {
    let current: unknown = node;
    for (let hops = 0; hops < 32; hops++) {
      const ref = (current as { $ref?: unknown } | null)?.$ref;
      if (typeof ref !== 'string') return current as T;
      current = lookup(this.document, ref);
    }
    throw new Error(`$ref chain too deep at ${JSON.stringify(node)}`);
  }
}

/** A path item whose operations have no `responses` (optional in OpenAPI 3.1). */
function withoutResponses(item: unknown): unknown {
  return Object.fromEntries(
    Object.entries(item as Record<string, unknown>).map(([key, value]) => {
      if (!METHODS.includes(key)) return [key, value];
      const { responses: _responses, ...operation } = value as Record<string, unknown>;
      return [key, operation];
    }),
  );
}
