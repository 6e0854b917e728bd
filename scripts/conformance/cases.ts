// The run's plan, made before any request is sent and reproducible from the seed: per operation, generated
// valid inputs and inputs with exactly one violation each, and valid bodies for fixtures and scenarios.
import fc from 'fast-check';
import type { Operation, Resource, SpecModel } from '../../server/spec-model.js';
import { flatten, type Schema } from '../../server/spec-model.js';
import { carrierOf, encodeBody, type Input, inputErrors } from './inputs.js';
import { type Mutation, mutationsOf } from './mutations.js';
import { typesOf } from './schema.js';
import { arbitraryOf } from './schema-arbitrary.js';

/**
 * The record an operation with a path id is sent to: one the run made (`slot` picks one of the resource's
 * targets; a delete brings the `create` input of a record made for it alone), or an id the account does not own.
 */
export type Target = { kind: 'owned'; slot: number; create?: Input } | { kind: 'unknown'; id: string };

export interface Case {
  operation: string;
  input: Input;
  target?: Target;
  /** Set on negative cases: the one violation. */
  mutation?: Pick<Mutation, 'kind' | 'describe' | 'wire' | 'headers'>;
}

/** A create sent twice: the second repeats the first's unique `field` (or, with no field known, the whole body). */
export interface Duplicate {
  operation: string;
  field?: string;
  first: Input;
  second: Input;
}

export interface Plan {
  seed: number;
  /** Embedded in every generated name, so the run's records can be searched for and told apart. */
  tag: string;
  valid: Case[];
  invalid: Case[];
  /** Valid inputs, by operation id, for requests the runner needs besides the cases (fixtures, scenarios). */
  spare: Record<string, Input[]>;
  /** Per resource name, create inputs of the records that owned show/update/patch cases work on. */
  targets: Record<string, Input[]>;
  duplicates: Duplicate[];
  /** Per resource name, create inputs of distinct records that fill a list past its first page (list-walks.ts). */
  fills: Record<string, Input[]>;
}

/** Records per resource that the owned show/update/patch cases share. */
export const TARGET_RECORDS = 4;
/** Records per resource that can fill lists past their first page: one more than a first page, for three lists. */
export const FILL_RECORDS = 33;
/** Duplicate creates per create operation that documents 409. */
const DUPLICATES = 10;
/**
 * Unknown integer ids are drawn from here up to the schema's maximum: no deployment with fewer records has handed
 * them out, so an answer other than 404 is the server's fault, not a record the account happens to own.
 */
const UNKNOWN_ID_FLOOR = 1_000_000_000_000;

export interface PlanOptions {
  seed: number;
  cases: number;
  /** Spare valid inputs per operation; enough for fixtures, scenarios and delete targets. */
  spares?: number;
}

export function planRun(model: SpecModel, { seed, cases, spares = 12 }: PlanOptions): Plan {
  const tag = `cf${(seed >>> 0).toString(36)}x`;
  let counter = 0;
  const unique = () => `${tag}${(counter++).toString(36)}`;
  const plan: Plan = { seed, tag, valid: [], invalid: [], spare: {}, targets: {}, duplicates: [], fills: {} };
  model.operations.forEach((operation, index) => {
    const opSeed = (seed + index * 7919) | 0;
    const inputs = validInputs(operation, unique);
    const resource = model.resources.find((r) => r.itemPath === operation.path && operation.pathParams.length === 1);
    const hasInputs = operation.queryParams.length > 0 || operation.body !== undefined || resource !== undefined;
    const valid = dedupe(sample(inputs, hasInputs ? cases : 1, opSeed)).filter(
      (input) => !inputErrors(operation, input),
    );
    plan.valid.push(
      ...(resource && valid.length
        ? idCases(operation, resource, valid, unique, cases, opSeed + 3)
        : valid.map((input) => ({ operation: operation.id, input }))),
    );
    plan.spare[operation.id] = sample(inputs, spares, opSeed + 1).filter((input) => !inputErrors(operation, input));
    plan.invalid.push(...invalidCases(operation, unique, cases, opSeed + 2));
  });
  model.resources.forEach((resource, index) => {
    const resourceSeed = (seed + index * 104729 + 17) | 0;
    plan.targets[resource.name] = sample(validInputs(resource.create, unique), TARGET_RECORDS, resourceSeed);
    plan.duplicates.push(...duplicates(resource, unique, Math.min(cases, DUPLICATES), resourceSeed + 1));
    plan.fills[resource.name] = sample(validInputs(resource.create, unique), FILL_RECORDS, resourceSeed + 2);
  });
  return plan;
}

/**
 * `cases` cases of an operation on a path id, cycling through its valid inputs: three in four go to a record
 * the run made, one in four to an id in the schema's range that the account does not own.
 */
function idCases(
  operation: Operation,
  resource: Resource,
  inputs: Input[],
  unique: () => string,
  cases: number,
  seed: number,
): Case[] {
  const idSchema = operation.pathParams[0]?.schema ?? {};
  const targets = sample(
    fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: unknownIds(idSchema, unique) }),
    cases,
    seed,
  );
  const isDelete = operation === resource.remove;
  const creates = isDelete
    ? sample(validInputs(resource.create, unique), targets.filter((t) => t === undefined).length, seed + 1)
    : [];
  let owned = 0;
  return targets.map((unknown, i): Case => {
    const input = inputs[i % inputs.length] as Input;
    if (unknown !== undefined) return { operation: operation.id, input, target: { kind: 'unknown', id: unknown } };
    const create = creates[owned];
    const target: Target = { kind: 'owned', slot: owned++ % TARGET_RECORDS, ...(create ? { create } : {}) };
    return { operation: operation.id, input, target };
  });
}

/** Ids of the schema's type and range that no run created: high integers, or generated (tagged) strings. */
function unknownIds(schema: Schema, unique: () => string): fc.Arbitrary<string> {
  const flat = flatten(schema);
  const types = typesOf(flat, 'query');
  if (!types.includes('integer') && !types.includes('number')) {
    return arbitraryOf(flat, { carrier: 'query', unique }).map(String);
  }
  const min = Math.ceil((flat.minimum as number | undefined) ?? 1);
  const max = Math.floor((flat.maximum as number | undefined) ?? Number.MAX_SAFE_INTEGER);
  const floor = max - min > 2 * UNKNOWN_ID_FLOOR ? min + UNKNOWN_ID_FLOOR : min + Math.floor((max - min) / 2);
  return fc
    .oneof({ weight: 4, arbitrary: fc.integer({ min: floor, max }) }, { weight: 1, arbitrary: fc.constant(max) })
    .map(String);
}

/** Where the create documents 409: creates that repeat a unique field of an earlier one (spec-model.ts). */
function duplicates(resource: Resource, unique: () => string, count: number, seed: number): Duplicate[] {
  const create = resource.create;
  if (!create.responses['409'] || count === 0) return [];
  const mediaTypes = Object.keys(create.body?.content ?? {});
  const fields = resource.uniqueFields;
  return Array.from({ length: count }, (_, i): Duplicate[] => {
    const mediaType = mediaTypes[i % Math.max(1, mediaTypes.length)];
    const [first, other] = sample(validInputs(create, unique, mediaType), 2, seed + i);
    if (!first || !other) return [];
    const field = fields[i % Math.max(1, fields.length)];
    if (field === undefined) return [{ operation: create.id, first, second: first }];
    const value = (first.body?.value as Record<string, unknown> | undefined)?.[field];
    if (value === undefined || !other.body) return [];
    const second: Input = {
      ...other,
      body: { ...other.body, value: { ...(other.body.value as object), [field]: value } },
    };
    return inputErrors(create, second) ? [] : [{ operation: create.id, field, first, second }];
  }).flat();
}

function sample<T>(arbitrary: fc.Arbitrary<T>, count: number, seed: number): T[] {
  return count > 0 ? fc.sample(arbitrary, { seed, numRuns: count }) : [];
}

function dedupe<T>(values: T[]): T[] {
  const seen = new Set<string>();
  return values.filter((value) => {
    const key = JSON.stringify(value);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** A valid query never sends two parameters the spec says exclude each other (`x-excludes`): the first one stays. */
function withoutExcluded(query: Record<string, unknown>, operation: Operation): Record<string, unknown> {
  const kept = { ...query };
  for (const parameter of operation.queryParams) {
    if (parameter.name in kept) for (const other of parameter.excludes) delete kept[other];
    // `x-before`: this one's value is earlier than the other's (since and until): a pair the wrong way round swaps.
    const other = parameter.before;
    const [mine, theirs] = [kept[parameter.name], other === undefined ? undefined : kept[other]];
    if (other !== undefined && typeof mine === 'string' && typeof theirs === 'string') {
      if (Date.parse(mine) > Date.parse(theirs)) [kept[parameter.name], kept[other]] = [theirs, mine];
      if (kept[parameter.name] === kept[other]) delete kept[other];
    }
  }
  return kept;
}

/** Valid inputs; with `mediaType`, always with a body of that type. */
function validInputs(operation: Operation, unique: () => string, mediaType?: string): fc.Arbitrary<Input> {
  const queryModel = Object.fromEntries(
    operation.queryParams.map((p) => [p.name, arbitraryOf(p.schema, { carrier: 'query', unique })]),
  );
  const query = fc
    .record(queryModel, { requiredKeys: operation.queryParams.filter((p) => p.required).map((p) => p.name) })
    .map((q) => withoutExcluded(q, operation));
  const body = operation.body;
  const mediaTypes = mediaType ? [mediaType] : Object.keys(body?.content ?? {});
  if (!body || mediaTypes.length === 0) return query.map((q) => ({ query: q }));
  const bodies = fc.constantFrom(...mediaTypes).chain((mediaType) =>
    arbitraryOf(body.content[mediaType] ?? {}, { carrier: carrierOf(mediaType), unique }).map((value) => ({
      mediaType,
      value,
    })),
  );
  const withBody = fc.record({ query, body: bodies });
  // A body that is not required is sometimes left out altogether.
  return body.required || mediaType
    ? withBody
    : fc.oneof({ weight: 9, arbitrary: withBody }, { weight: 1, arbitrary: query.map((q) => ({ query: q })) });
}

function invalidCases(operation: Operation, unique: () => string, cases: number, seed: number): Case[] {
  const mutations = mutationsOf(operation);
  if (mutations.length === 0) return [];
  // Every kind of violation at least once, then evenly on fresh valid inputs of the mutation's media type.
  const perMutation = Math.ceil(Math.max(cases, mutations.length) / mutations.length);
  const out = mutations.flatMap((mutation, m) =>
    sample(validInputs(operation, unique, mutation.mediaType), perMutation, seed + m).flatMap((base): Case[] => {
      const input = mutation.apply(base);
      // The mutated input must really break the spec (wire faults are judged by the server alone).
      if (!mutation.wire && !inputErrors(operation, input)) return [];
      // An empty body under a wrong content type is no body at all, which an optional body allows.
      if (
        mutation.wire === 'bad_content_type' &&
        input.body &&
        encodeBody(input.body.mediaType, input.body.value).text === ''
      ) {
        return [];
      }
      const { kind, describe, wire, headers } = mutation;
      const planned = { kind, describe, ...(wire ? { wire } : {}), ...(headers ? { headers } : {}) };
      return [{ operation: operation.id, input, mutation: planned }];
    }),
  );
  return dedupe(out);
}
