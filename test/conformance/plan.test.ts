// The run's plan is reproducible from its seed and honest: valid cases match the spec, every negative case
// breaks it, and generated names are unique within a run.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { type Plan, planRun } from '../../scripts/conformance/cases.js';
import { curlOf } from '../../scripts/conformance/http.js';
import { inputErrors } from '../../scripts/conformance/inputs.js';
import { dryPlan } from '../../scripts/conformance/run.js';
import { buildModel, loadSpecText } from '../../server/spec-model.js';

const specText = await loadSpecText(new URL('../../generated/openapi.yaml', import.meta.url).pathname);
const model = buildModel(specText);
const operation = (id: string) => model.operations.find((op) => op.id === id) ?? expect.unreachable(id);

/** The plan of a seed, made once for the tests that each read it (none changes it). */
const plans = new Map<string, Promise<Plan>>();
function sharedPlan(seed: number, cases: number): Promise<Plan> {
  const key = `${seed} ${cases}`;
  const plan = plans.get(key) ?? dryPlan({ seed, cases });
  plans.set(key, plan);
  return plan;
}

describe('the plan', () => {
  it('is the same for the same seed, and differs for another', async () => {
    const once = await dryPlan({ seed: 123, cases: 30 });
    const again = await dryPlan({ seed: 123, cases: 30 });
    const other = await dryPlan({ seed: 124, cases: 30 });
    expect(JSON.stringify(again)).toBe(JSON.stringify(once));
    expect(JSON.stringify(other.valid)).not.toBe(JSON.stringify(once.valid));
  });

  it('covers every operation of the spec with valid cases', async () => {
    const plan = await dryPlan({ seed: 5, cases: 20 });
    // A recovery's window (two date-times, the first inside retention and before the second) is not one the
    // runner can make from the schema alone: it has no valid cases yet.
    const windowed = new Set(['webhook-endpoints_recover']);
    expect(new Set(plan.valid.map((c) => c.operation))).toEqual(
      new Set(model.operations.map((op) => op.id).filter((id) => !windowed.has(id))),
    );
  });

  it('makes only valid inputs for valid cases, and only spec-breaking ones for negative cases', async () => {
    const plan = await dryPlan({ seed: 6, cases: 60 });
    for (const testCase of plan.valid)
      expect(inputErrors(operation(testCase.operation), testCase.input)).toBeUndefined();
    for (const testCase of plan.invalid.filter((c) => !c.mutation?.wire)) {
      expect(inputErrors(operation(testCase.operation), testCase.input), testCase.mutation?.describe).toBeDefined();
    }
  });

  it.each([
    'wrong_type',
    'out_of_range',
    'not_in_enum',
    'too_long',
    'too_short',
    'bad_format',
    'missing_required',
    'unknown_field',
    'unknown_form_field',
    'object_as_text',
    'unknown_query',
    'bad_content_type',
    'malformed_body',
    'missing_body',
    'unacceptable_accept',
    'oversized_body',
  ])('has negative cases of kind %s', async (kind) => {
    const plan = await sharedPlan(7, 20);
    expect(plan.invalid.some((c) => c.mutation?.kind === kind)).toBe(true);
  });

  it('never repeats a domain name within a run', async () => {
    const plan = await dryPlan({ seed: 8, cases: 200 });
    const names = plan.valid
      .filter((c) => c.operation === 'domains_store')
      .map((c) =>
        String((c.input.body?.value as { name?: string } | undefined)?.name)
          .toLowerCase()
          .replace(/\.$/, ''),
      );
    expect(names.length).toBe(200);
    expect(new Set(names).size).toBe(names.length);
  });
});

describe('cases on a path id', () => {
  const ID_OPERATIONS = [
    'domains_show',
    'domains_update',
    'domains_patch',
    'domains_delete',
    'spaces_show',
    'spaces_delete',
  ];

  it.each(ID_OPERATIONS)(
    '%s gets --cases cases, most on records the run makes, some on ids it does not own',
    async (id) => {
      const plan = await sharedPlan(9, 120);
      const cases = plan.valid.filter((c) => c.operation === id);
      expect(cases).toHaveLength(120);
      const unknown = cases.filter((c) => c.target?.kind === 'unknown');
      expect(unknown.length).toBeGreaterThan(10);
      expect(unknown.length).toBeLessThan(60);
      for (const testCase of unknown) {
        const value = Number(testCase.target?.kind === 'unknown' ? testCase.target.id : Number.NaN);
        expect(Number.isSafeInteger(value), String(value)).toBe(true);
        expect(value).toBeGreaterThanOrEqual(1_000_000_000_000);
        expect(value).toBeLessThanOrEqual(Number.MAX_SAFE_INTEGER);
      }
    },
  );

  it('gives every owned delete a valid create of its own, never one shared with another case', async () => {
    const plan = await dryPlan({ seed: 10, cases: 80 });
    const creates = plan.valid
      .filter((c) => c.operation === 'domains_delete' && c.target?.kind === 'owned')
      .map((c) => (c.target?.kind === 'owned' ? c.target.create : undefined));
    expect(creates.length).toBeGreaterThan(40);
    const names = creates.map((input) => {
      if (!input) return expect.unreachable('an owned delete without a create input');
      expect(inputErrors(operation('domains_store'), input)).toBeUndefined();
      return String((input.body?.value as { name?: string } | undefined)?.name)
        .toLowerCase()
        .replace(/\.$/, '');
    });
    expect(new Set(names).size).toBe(names.length);
  });
});

describe('duplicate creates', () => {
  it('take the unique field from the spec text: a domain name is unique, a space name is not', () => {
    expect(model.resources.map((r) => [r.name, r.uniqueFields])).toEqual([
      ['domains', ['name']],
      ['spaces', []],
      ['webhook-endpoints', []],
      ['api-keys', []],
    ]);
  });

  it('take it from x-unique too, and find none when the spec says nothing', () => {
    const silent = specText.replace('Unique across the whole service.', '');
    expect(buildModel(silent).resources[0]?.uniqueFields).toEqual([]);
    const marked = silent.replace(/(\n(\s+)format: idn-hostname\n)/, '$1$2x-unique: true\n');
    expect(buildModel(marked).resources[0]?.uniqueFields).toEqual(['name']);
  });

  it('repeat only the unique field of a valid first create, in a valid second one, where 409 is documented', async () => {
    const plan = await dryPlan({ seed: 11, cases: 50 });
    // spaces_store documents 409 too (an Idempotency-Key still in use), webhook-endpoints_store (too many
    // endpoints) and api-keys_store (an Idempotency-Key still in use), with no unique field: identical bodies.
    const domains = plan.duplicates.filter((d) => d.operation === 'domains_store');
    const spaces = plan.duplicates.filter((d) => d.operation === 'spaces_store');
    const endpoints = plan.duplicates.filter((d) => d.operation === 'webhook-endpoints_store');
    const keys = plan.duplicates.filter((d) => d.operation === 'api-keys_store');
    expect([domains.length, spaces.length, endpoints.length, keys.length, plan.duplicates.length]).toEqual([
      10, 10, 10, 10, 40,
    ]);
    for (const duplicate of [...spaces, ...endpoints, ...keys]) {
      expect(duplicate.field).toBeUndefined();
      expect(duplicate.second).toEqual(duplicate.first);
    }
    for (const { operation: id, field, first, second } of domains) {
      expect([id, field]).toEqual(['domains_store', 'name']);
      expect(inputErrors(operation(id), first)).toBeUndefined();
      expect(inputErrors(operation(id), second)).toBeUndefined();
      const [a, b] = [first, second].map((input) => input.body?.value as Record<string, unknown>);
      expect(b?.name).toBe(a?.name);
      expect(second.body?.mediaType).toBe(first.body?.mediaType);
    }
    expect(domains.some((d) => JSON.stringify(d.first) !== JSON.stringify(d.second))).toBe(true);
  });

  it('send an identical body twice when 409 is documented but no field is marked unique', () => {
    const plan = planRun(buildModel(specText.replace('Unique across the whole service.', '')), { seed: 12, cases: 5 });
    // Five per create that documents 409: api-keys_store, domains_store, spaces_store and webhook-endpoints_store.
    expect(plan.duplicates.map((d) => d.operation).sort()).toEqual([
      ...Array(5).fill('api-keys_store'),
      ...Array(5).fill('domains_store'),
      ...Array(5).fill('spaces_store'),
      ...Array(5).fill('webhook-endpoints_store'),
    ]);
    for (const duplicate of plan.duplicates) {
      expect(duplicate.field).toBeUndefined();
      expect(duplicate.second).toEqual(duplicate.first);
    }
  });
});

describe('curl lines', () => {
  it('show keys as shell variables and quote what the shell would touch', () => {
    const line = curlOf(
      {
        method: 'POST',
        url: "http://127.0.0.1:1/api/v1/spaces?q=it's",
        headers: { Authorization: 'Bearer dss_secret_value', 'Content-Type': 'application/json' },
        body: '{"name":"a \'quoted\' $HOME"}',
      },
      [['dss_secret_value', 'DSS_API_KEY']],
    );
    expect(line).toBe(
      `curl -i -X POST 'http://127.0.0.1:1/api/v1/spaces?q=it'\\''s' -H "Authorization: Bearer $DSS_API_KEY" -H 'Content-Type: application/json' --data-binary '{"name":"a '\\''quoted'\\'' $HOME"}'`,
    );
  });

  it('write an oversized body as printf padding, which a shell turns back into the same bytes', async () => {
    const body = '{"name":"it\'s"}'.padEnd(4096, ' ');
    const line = curlOf({ method: 'PUT', url: 'http://127.0.0.1:1/x', headers: {}, body }, []);
    expect(line).toBe(
      `curl -i -X PUT 'http://127.0.0.1:1/x' --data-binary "$(printf '%s%*s' '{"name":"it'\\''s"}' 4081 '')"`,
    );
    const data = /--data-binary (.*)$/.exec(line)?.[1] ?? '';
    const shell = spawnSync('bash', ['-c', `printf '%s' ${data}`], { encoding: 'utf8' });
    expect(shell.stdout).toBe(body);
  });
});
