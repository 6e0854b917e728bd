// The checks every response gets, from the spec alone: no 5xx, the status is documented for the operation,
// the content type is one documented for that status (no body where none is), the body matches the schema and
// the documented headers are present and valid.

import type { Operation, ResponseSpec } from '../../server/spec-model.js';
import type { Exchange } from './http.js';
import type { Results } from './results.js';
import { schemaErrors } from './validator.js';

export function documentedResponse(operation: Operation, status: number): ResponseSpec | undefined {
  const { responses } = operation;
  return responses[String(status)] ?? responses[`${String(status)[0]}XX`] ?? responses.default;
}

export function mediaTypeOf(exchange: Exchange): string {
  return (exchange.reply.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
}

/** no_server_error alone: an answer below 500. No answer at all is no pass. */
export function checkNoServerError(results: Results, subject: string, exchange: Exchange): boolean {
  const { status, error } = exchange.reply;
  const problem = status === 0 ? `no response: ${error}` : status >= 500 ? `status ${status}` : undefined;
  return results.judge(subject, 'no_server_error', problem, exchange);
}

/** Runs the generic checks on one response of `operation`; true when all of them passed. */
export function checkResponse(results: Results, operation: Operation, exchange: Exchange): boolean {
  const subject = operation.id;
  const { status } = exchange.reply;
  let ok = checkNoServerError(results, subject, exchange);
  if (status === 0) return false;
  const documented = documentedResponse(operation, status);
  const listed = Object.keys(operation.responses).join(', ');
  ok =
    results.judge(
      subject,
      'status_code_documented',
      documented ? undefined : `status ${status} is not documented (documented: ${listed})`,
      exchange,
    ) && ok;
  if (!documented) return false;

  const mediaType = mediaTypeOf(exchange);
  const mediaTypes = Object.keys(documented.content);
  let contentProblem: string | undefined;
  if (mediaTypes.length === 0) {
    if (exchange.reply.text !== '')
      contentProblem = `status ${status} documents no body, but one came (${mediaType || 'no content type'})`;
  } else if (!mediaTypes.includes(mediaType)) {
    contentProblem = `status ${status} came as "${mediaType || 'no content type'}", documented: ${mediaTypes.join(', ')}`;
  }
  ok = results.judge(subject, 'content_type_documented', contentProblem, exchange) && ok;

  const schema = documented.content[mediaType];
  if (schema) {
    const problem =
      exchange.reply.json === undefined
        ? `status ${status}: the body is not JSON`
        : schemaErrors(schema, exchange.reply.json);
    ok = results.judge(subject, 'response_schema', problem && `status ${status}: ${problem}`, exchange) && ok;
  }

  const headerProblems: string[] = [];
  for (const [name, header] of Object.entries(documented.headers)) {
    const value = exchange.reply.headers[name.toLowerCase()];
    if (value === undefined) {
      if (header.required) headerProblems.push(`${name} missing`);
    } else if (header.schema) {
      const problem = schemaErrors(header.schema, value);
      if (problem) headerProblems.push(`${name}${problem}`);
    }
  }
  const headerProblem = headerProblems.length ? `status ${status}: ${headerProblems.join('; ')}` : undefined;
  return results.judge(subject, 'response_headers', headerProblem, exchange) && ok;
}
