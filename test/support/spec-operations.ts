// The operations of the spec as plain data (method, path template, resource), read from the shared spec model
// (server/spec-model.ts), so that tests walk the spec instead of keeping a hand-written list that could fall
// behind it.
import type { ExampleBody } from '../../server/resource.js';
import { RESOURCE_NAMES, RESOURCES, type ResourceName } from '../../server/resources.js';
import { spec } from './contract.js';

export interface SpecOperation {
  operationId: string;
  /** Upper case, e.g. "PATCH". */
  method: string;
  /** e.g. "/domains/{id}", below the base path. */
  template: string;
  resource: ResourceName;
  /** True for operations on one record (the template has an {id}). */
  onRecord: boolean;
  /** True when the operation documents a request body (store and update). */
  takesBody: boolean;
  summary: string;
  /** The operation's first tag, e.g. "Domains". */
  tag: string;
  /** The operation's x-codeSamples by language ("Shell", "TypeScript"). */
  codeSamples: Record<string, string>;
}

/** Every operation of the spec. */
export const allOperations: SpecOperation[] = spec.model.operations.map((operation) => {
  const object = operation.object as {
    summary: string;
    tags: string[];
    'x-codeSamples'?: Array<{ lang: string; source: string }>;
  };
  return {
    operationId: operation.id,
    method: operation.method,
    template: operation.path,
    resource: operation.path.split('/')[1] as ResourceName,
    onRecord: operation.pathParams.some((p) => p.name === 'id'),
    takesBody: operation.body !== undefined,
    summary: object.summary,
    tag: object.tags[0] as string,
    codeSamples: Object.fromEntries((object['x-codeSamples'] ?? []).map((s) => [s.lang, s.source])),
  };
});

/**
 * The operations of the resource modules (records an account owns: server/resources.ts), which the suites that
 * walk the spec send valid bodies to from the modules' examples. The webhook endpoints and the event log (JSON
 * bodies only) have suites of their own in test/webhooks/, and the conformance runner walks every operation.
 */
export const operations: SpecOperation[] = allOperations.filter((operation) =>
  (RESOURCE_NAMES as readonly string[]).includes(operation.resource),
);

/** The methods a path template of the spec allows, as an Allow header would list them: HEAD wherever GET is. */
export function methodsOf(template: string): string[] {
  const methods = allOperations.filter((op) => op.template === template).map((op) => op.method);
  return methods.includes('GET') ? [...methods, 'HEAD'] : methods;
}

/** The full request path (base path included) of an operation for a record id. */
export function pathOf(operation: SpecOperation, id: number | string = 1): string {
  return `${spec.basePath}${operation.template.replace('{id}', String(id))}`;
}

/** The registered module of a resource. */
export function resourceModule(name: ResourceName) {
  const module = RESOURCES.find((resource) => resource.name === name);
  if (!module) throw new Error(`${name} is not a registered resource (server/resources.ts)`);
  return module;
}

/** A body as a form. */
export function asForm(body: ExampleBody): string {
  return new URLSearchParams(Object.entries(body).map(([name, value]) => [name, String(value)])).toString();
}

/** A body every store or update of the resource accepts, as a form: the resource module's examples. */
export function validForm(operation: SpecOperation, unique = ''): string {
  const { examples } = resourceModule(operation.resource);
  return asForm(operation.method === 'POST' ? examples.store(`valid${unique}`) : examples.update(`valid${unique}`));
}
