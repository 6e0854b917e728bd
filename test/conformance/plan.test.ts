// The run's plan is reproducible from its seed and honest: valid cases match the spec, every negative case
// breaks it, and generated names are unique within a run.
import { describe, expect, it } from 'vitest';
import { curlOf } from '../../scripts/conformance/http.js';
import { inputErrors } from '../../scripts/conformance/inputs.js';
import { dryPlan } from '../../scripts/conformance/run.js';
import { buildModel, loadSpecText } from '../../scripts/conformance/spec-model.js';

const model = buildModel(await loadSpecText(new URL('../../generated/openapi.yaml', import.meta.url).pathname));
const operation = (id: string) => model.operations.find((op) => op.id === id) ?? expect.unreachable(id);

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
    expect(new Set(plan.valid.map((c) => c.operation))).toEqual(new Set(model.operations.map((op) => op.id)));
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
    'unknown_query',
    'bad_content_type',
    'malformed_body',
    'missing_body',
  ])('has negative cases of kind %s', async (kind) => {
    const plan = await dryPlan({ seed: 7, cases: 20 });
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

describe('curl lines', () => {
  it('show keys as shell variables and quote what the shell would touch', () => {
    const line = curlOf(
      {
        method: 'POST',
        url: "http://127.0.0.1:1/api/v1/spaces?q=it's",
        headers: { Authorization: 'Bearer dss_secret_value', 'Content-Type': 'application/json' },
        body: '{"name":"a \'quoted\' $HOME"}',
      },
      [['dss_secret_value', 'API_KEY']],
    );
    expect(line).toBe(
      `curl -i -X POST 'http://127.0.0.1:1/api/v1/spaces?q=it'\\''s' -H "Authorization: Bearer $API_KEY" -H 'Content-Type: application/json' --data-binary '{"name":"a '\\''quoted'\\'' $HOME"}'`,
    );
  });
});
