// The breaking-change gate of `npm run lint` (scripts/spec-compat.ts, over `redocly diff`): a spec that breaks
// what the released one promised fails unless info.version is a new major; an additive change passes; and the
// spec as it is now passes against the released one.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { checkCompatibility } from '../../scripts/spec-compat.js';

const root = new URL('../..', import.meta.url).pathname;
const RELEASED = join(root, 'spec/released/openapi.yaml');
const CURRENT = join(root, 'generated/openapi.yaml');
const dir = mkdtempSync(join(tmpdir(), 'dss-compat-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Spec = {
  info: { version: string };
  components: { schemas: Record<string, { required?: string[]; properties: Record<string, unknown> }> };
};

/** The current spec changed by `change`, written to a file of its own; the gate's exit code and output on it. */
function gate(name: string, change: (spec: Spec) => void) {
  const spec = parse(readFileSync(CURRENT, 'utf8')) as Spec;
  change(spec);
  const file = join(dir, `${name}.yaml`);
  writeFileSync(file, stringify(spec));
  const lines: string[] = [];
  const code = checkCompatibility(RELEASED, file, (line) => lines.push(line));
  return { code, output: lines.join('\n') };
}

const removeColorFromSpaces = (spec: Spec) => {
  const space = spec.components.schemas.space as Spec['components']['schemas'][string];
  delete space.properties.color;
  space.required = space.required?.filter((field) => field !== 'color');
};

describe('the breaking-change gate', () => {
  it('passes the spec as it is', () => {
    const lines: string[] = [];
    expect(checkCompatibility(RELEASED, CURRENT, (line) => lines.push(line))).toBe(0);
    expect(lines.join('\n')).toMatch(/0 major/);
  }, 60_000);

  it('fails a removed response field, naming it, while the version stays in the same major', () => {
    const { code, output } = gate('breaking', removeColorFromSpaces);
    expect(code).toBe(1);
    expect(output).toMatch(/major/);
    expect(output).toMatch(/color/);
    expect(output).toMatch(/Breaking-change gate: FAILED/);
  }, 60_000);

  it('passes the same change released as a new major version', () => {
    const { code } = gate('major-bump', (spec) => {
      removeColorFromSpaces(spec);
      spec.info.version = '2.0.0';
    });
    expect(code).toBe(0);
  }, 60_000);

  it('passes the scopes declared where any key was accepted, but fails an operation that needs another scheme', () => {
    const { code, output } = gate('new-scheme', (spec) => {
      const document = spec as unknown as {
        components: { securitySchemes: Record<string, unknown> };
        paths: Record<string, Record<string, { security?: unknown }>>;
      };
      document.components.securitySchemes.adminToken = { type: 'apiKey', in: 'header', name: 'X-Admin-Token' };
      (document.paths['/spaces'] as Record<string, { security?: unknown }>).get = {
        ...document.paths['/spaces']?.get,
        security: [{ adminToken: [] }],
      };
    });
    expect(code).toBe(1);
    expect(output).toMatch(/1 breaking change/);
  }, 60_000);

  it('passes an added optional request field', () => {
    const { code, output } = gate('additive', (spec) => {
      const store = spec.components.schemas['space-store'] as Spec['components']['schemas'][string];
      store.properties.description = { type: 'string', maxLength: 255, description: 'A note about the space.' };
    });
    expect(output).toMatch(/Passed/);
    expect(code).toBe(0);
  }, 60_000);

  it('passes a new event type added with its webhooks entry, but fails a value added to a closed response enum', () => {
    const open = gate('open-set', (spec) => {
      const types = spec.components.schemas['event-type'] as unknown as { enum: string[] };
      types.enum.push('space.archived');
      const webhooks = (spec as unknown as { webhooks: Record<string, unknown> }).webhooks;
      webhooks['space.archived'] = webhooks['space.updated'];
    });
    expect(open.code).toBe(0);
    const closed = gate('closed-set', (spec) => {
      const status = spec.components.schemas['domain-status'] as unknown as { enum: string[] };
      status.enum.push('archived');
    });
    expect(closed.code).toBe(1);
    expect(closed.output).toMatch(/Enum gained values|enum/);
  }, 60_000);
});
