// The run's plan, made before any request is sent and reproducible from the seed: per operation, generated
// valid inputs and inputs with exactly one violation each, and valid bodies for fixtures and scenarios.
import fc from 'fast-check';
import { carrierOf, encodeBody, type Input, inputErrors } from './inputs.js';
import { type Mutation, mutationsOf } from './mutations.js';
import { arbitraryOf } from './schema-arbitrary.js';
import type { Operation, SpecModel } from './spec-model.js';

export interface Case {
  operation: string;
  input: Input;
  /** Set on negative cases: the one violation. */
  mutation?: Pick<Mutation, 'kind' | 'describe' | 'wire'>;
}

export interface Plan {
  seed: number;
  /** Embedded in every generated name, so the run's records can be searched for and told apart. */
  tag: string;
  valid: Case[];
  invalid: Case[];
  /** Valid inputs, by operation id, for requests the runner needs besides the cases (fixtures, scenarios). */
  spare: Record<string, Input[]>;
}

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
  const plan: Plan = { seed, tag, valid: [], invalid: [], spare: {} };
  model.operations.forEach((operation, index) => {
    const opSeed = (seed + index * 7919) | 0;
    const inputs = validInputs(operation, unique);
    const hasInputs = operation.queryParams.length > 0 || operation.body !== undefined;
    const valid = dedupe(sample(inputs, hasInputs ? cases : 1, opSeed)).filter(
      (input) => !inputErrors(operation, input),
    );
    plan.valid.push(...valid.map((input) => ({ operation: operation.id, input })));
    plan.spare[operation.id] = sample(inputs, spares, opSeed + 1).filter((input) => !inputErrors(operation, input));
    plan.invalid.push(...invalidCases(operation, unique, cases, opSeed + 2));
  });
  return plan;
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

/** Valid inputs; with `mediaType`, always with a body of that type. */
function validInputs(operation: Operation, unique: () => string, mediaType?: string): fc.Arbitrary<Input> {
  const queryModel = Object.fromEntries(
    operation.queryParams.map((p) => [p.name, arbitraryOf(p.schema, { carrier: 'query', unique })]),
  );
  const query = fc.record(queryModel, {
    requiredKeys: operation.queryParams.filter((p) => p.required).map((p) => p.name),
  });
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
      const { kind, describe, wire } = mutation;
      return [{ operation: operation.id, input, mutation: { kind, describe, ...(wire ? { wire } : {}) } }];
    }),
  );
  return dedupe(out);
}
