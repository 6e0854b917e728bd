// The route table: every operation of the spec as the service serves it, read once from the spec model.
// api-routes.ts finds a request's path by its pattern and runs the chain of its method, or a 405 for the others;
// the 404's hints, the warm-up and the tests ask the same table.
import { type ApiSpec, flatten, type Operation, type Schema } from '../../spec-model.js';

/** What a request needs to know of one parameter. */
export interface RouteParameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  /** The schema (dereferenced, through allOf), flattened. */
  schema: Schema;
  /** The schema is an integer: sent as text, read as a number. */
  integer: boolean;
}

/** One operation, routed. */
export interface Route {
  /** The operation as the spec model reads it (schemas dereferenced): what the response checks judge by too. */
  operation: Operation;
  method: string;
  template: string;
  /** The path's shared parameters, then the operation's own. */
  parameters: RouteParameter[];
  /** The parameters' names by where they are sent; a header's as the spec spells it, with Node's lowercase name. */
  pathNames: string[];
  queryNames: string[];
  headerNames: Array<{ name: string; lowercase: string }>;
  /** Whether the operation takes If-Match (read once, by the validation step, into the versions it accepts). */
  takesIfMatch: boolean;
  /** The kind of list cursor its `after` parameter takes (`list-cursor`, `id-cursor`), if it has one. */
  cursor: 'list-cursor' | 'id-cursor' | undefined;
  /** The body's schema by media type, flattened (its fields, `x-rejected-fields`), where there is a body. */
  bodies: Record<string, Schema>;
}

/** A path of the spec: its routes by method, and the methods `Allow` lists (HEAD beside GET). */
export interface PathRoutes {
  template: string;
  routes: Route[];
  allow: string[];
  /** Tests a path below the base path; its groups are the path's parameters, in `parameterNames`' order. */
  pattern: RegExp;
  parameterNames: string[];
}

export interface RouteTable {
  paths: PathRoutes[];
  /** Every operation, routed. */
  routes: Route[];
  /** Whether a path below the base path (e.g. "/domains/1") is one of the spec's: for the 404's hints. */
  hasPath(path: string): boolean;
  /** The operation a method and a path below the base path name, if any (HEAD finds GET's). */
  find(method: string, path: string): Route | undefined;
}

/** A path segment that is a parameter (`{id}`), its name in the group. */
const PARAMETER = /^\{(.+)\}$/;

export function routeTable(spec: ApiSpec): RouteTable {
  const paths = [...spec.model.paths].map(([template, methods]): PathRoutes => {
    const routes = spec.model.operations.filter((op) => op.path === template).map(routeOf);
    const segments = template.split('/');
    return {
      template,
      routes,
      allow: allowed(methods),
      pattern: new RegExp(
        `^${segments
          .map((segment) => (PARAMETER.test(segment) ? '([^/]+)' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
          .join('/')}$`,
      ),
      parameterNames: segments.flatMap((segment) => PARAMETER.exec(segment)?.slice(1) ?? []),
    };
  });
  const pathOf = (path: string) => paths.find(({ pattern }) => pattern.test(path));
  return {
    paths,
    routes: paths.flatMap((path) => path.routes),
    hasPath: (path) => pathOf(path) !== undefined,
    find(method, path) {
      const routes = pathOf(path)?.routes ?? [];
      const upper = method.toUpperCase() === 'HEAD' ? 'GET' : method.toUpperCase();
      return routes.find((route) => route.method === upper);
    },
  };
}

function routeOf(operation: Operation): Route {
  const parameters = [...operation.pathParams, ...operation.queryParams, ...operation.headerParams].map((p) => {
    const schema = flatten(p.schema);
    return { name: p.name, in: p.in, schema, integer: isInteger(schema) };
  });
  const after = parameters.find((p) => p.in === 'query' && p.name === 'after')?.schema.format;
  const bodies = Object.fromEntries(
    Object.entries(operation.body?.content ?? {}).map(([mediaType, schema]) => [mediaType, flatten(schema)]),
  );
  return {
    operation,
    method: operation.method,
    template: operation.path,
    parameters,
    pathNames: operation.pathParams.map((p) => p.name),
    queryNames: operation.queryParams.map((p) => p.name),
    headerNames: operation.headerParams.map((p) => ({ name: p.name, lowercase: p.name.toLowerCase() })),
    takesIfMatch: operation.headerParams.some((p) => p.name === 'If-Match'),
    cursor: after === 'list-cursor' || after === 'id-cursor' ? after : undefined,
    bodies,
  };
}

/** The methods of a path as `Allow` lists them: HEAD next to GET, whether or not the spec names it. */
function allowed(methods: string[]): string[] {
  const others = methods.filter((method) => method !== 'HEAD');
  if (!others.includes('GET')) return methods;
  return others.flatMap((method) => (method === 'GET' ? ['GET', 'HEAD'] : [method]));
}

/** Whether a flattened schema allows integers. */
export function isInteger({ type }: Schema): boolean {
  return type === 'integer' || (Array.isArray(type) && type.includes('integer'));
}
