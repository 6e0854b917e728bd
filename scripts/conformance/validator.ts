// JSON Schema validation with ajv (draft 2020-12, as OpenAPI 3.1 uses), knowing the spec's custom formats
// through formats.ts only: the runner judges servers by the spec, not by any server's code.
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import formats from 'ajv-formats';
import type { Schema } from '../../server/spec-model.js';
import { FORMATS } from './formats.js';

const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
// ajv-formats is CommonJS: its default export arrives as the module object under NodeNext typing.
(formats as unknown as { default: (a: Ajv2020) => void }).default(ajv);
for (const [name, kit] of Object.entries(FORMATS)) ajv.addFormat(name, { type: 'string', validate: kit.validate });

const compiled = new WeakMap<Schema, ValidateFunction>();

/** Undefined when the value matches; otherwise ajv's findings in one line. */
export function schemaErrors(schema: Schema, value: unknown): string | undefined {
  let check = compiled.get(schema);
  if (!check) {
    check = ajv.compile(schema);
    compiled.set(schema, check);
  }
  if (check(value)) return undefined;
  return (check.errors ?? [])
    .map((e) => {
      const extra = (e.params as { additionalProperty?: string }).additionalProperty;
      return `${e.instancePath || '/'} ${e.message}${extra ? ` (${extra})` : ''}`;
    })
    .join(', ');
}
