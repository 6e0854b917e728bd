// Judges a delivered webhook payload by the spec's `webhooks` section: the schema of its type's payload.
import { schemaErrors } from '../../scripts/conformance/validator.js';
import { spec } from './contract.js';

/** What is wrong with the payload by the spec; empty when nothing is. */
export function payloadFindings(payload: { type?: unknown }): string[] {
  const schema = spec.model.webhooks.get(String(payload.type));
  if (!schema) return [`the spec's webhooks have no event type ${String(payload.type)}`];
  const errors = schemaErrors(schema, payload);
  return errors ? [errors] : [];
}
