// The checks every response gets, from the spec alone: no 5xx, the status is documented for the operation,
// the content type is one documented for that status (no body where none is), the body matches the schema and
// the documented headers are present and valid.

import type { Operation, ResponseSpec, Schema } from '../../server/spec-model.js';
import type { Exchange, Reply } from './http.js';
import type { Results } from './results.js';
import { typesOf } from './schema.js';
import { schemaErrors } from './validator.js';

export function documentedResponse(operation: Operation, status: number): ResponseSpec | undefined {
  const { responses } = operation;
  return responses[String(status)] ?? responses[`${String(status)[0]}XX`] ?? responses.default;
}

export function mediaTypeOf(reply: Reply): string {
  return (reply.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
}

/** no_server_error alone: an answer below 500. No answer at all is no pass. */
export function checkNoServerError(results: Results, subject: string, exchange: Exchange): boolean {
  const { status, error } = exchange.reply;
  const problem = status === 0 ? `no response: ${error}` : status >= 500 ? `status ${status}` : undefined;
  return results.judge(subject, 'no_server_error', problem, exchange);
}

/** The checks a response gets from its operation's documentation alone (no_server_error aside). */
export type ResponseCheck =
  | 'status_code_documented'
  | 'content_type_documented'
  | 'response_schema'
  | 'response_headers';

/** A header arrives as text; one the spec types as a number (and not as a string) is judged as a number. */
function headerValue(schema: Schema, value: string): unknown {
  const types = typesOf(schema, 'json');
  const numeric = (types.includes('integer') || types.includes('number')) && !types.includes('string');
  return numeric && /^-?\d+(\.\d+)?$/.test(value) ? Number(value) : value;
}

/**
 * The spec's verdict on one response of `operation`, check by check: the problem, or undefined where the check
 * passed. Without a documented status only that check is judged. The one response checker: the runner judges
 * deployments with it and the test suite judges every answer the tests receive with it (test/support/contract.ts).
 */
export function responseFindings(operation: Operation, reply: Reply): Array<[ResponseCheck, string | undefined]> {
  const { status } = reply;
  const documented = documentedResponse(operation, status);
  const listed = Object.keys(operation.responses).join(', ');
  if (!documented) return [['status_code_documented', `status ${status} is not documented (documented: ${listed})`]];
  const findings: Array<[ResponseCheck, string | undefined]> = [['status_code_documented', undefined]];

  const mediaType = mediaTypeOf(reply);
  const mediaTypes = Object.keys(documented.content);
  let contentProblem: string | undefined;
  if (mediaTypes.length === 0) {
    if (reply.text !== '')
      contentProblem = `status ${status} documents no body, but one came (${mediaType || 'no content type'})`;
  } else if (!mediaTypes.includes(mediaType)) {
    contentProblem = `status ${status} came as "${mediaType || 'no content type'}", documented: ${mediaTypes.join(', ')}`;
  }
  findings.push(['content_type_documented', contentProblem]);

  const schema = documented.content[mediaType];
  if (schema) {
    const problem = reply.json === undefined ? 'the body is not JSON' : schemaErrors(schema, reply.json);
    findings.push(['response_schema', problem && `status ${status}: ${problem}`]);
  }

  const headerProblems: string[] = [];
  for (const [name, header] of Object.entries(documented.headers)) {
    const value = reply.headers[name.toLowerCase()];
    if (value === undefined) {
      if (header.required) headerProblems.push(`${name} missing`);
    } else if (header.schema) {
      const problem = schemaErrors(header.schema, headerValue(header.schema, value));
      if (problem) headerProblems.push(`${name}${problem}`);
    }
  }
  findings.push([
    'response_headers',
    headerProblems.length ? `status ${status}: ${headerProblems.join('; ')}` : undefined,
  ]);
  return findings;
}

/** Runs the generic checks on one response of `operation`; true when all of them passed. */
export function checkResponse(results: Results, operation: Operation, exchange: Exchange): boolean {
  let ok = checkNoServerError(results, operation.id, exchange);
  if (exchange.reply.status === 0) return false;
  for (const [check, problem] of responseFindings(operation, exchange.reply))
    ok = results.judge(operation.id, check, problem, exchange) && ok;
  return ok;
}
