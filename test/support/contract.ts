// Checks every response a test receives against the spec, independently of the server's own response
// validation (which cannot see 401, 404 or 405 answered before it runs), with the conformance runner's response
// checker (scripts/conformance/response-checks.ts): the status is documented for the operation, the content type
// is documented, the body matches its schema and documented headers are present and valid. Every answer also
// carries X-Request-Id, and one for a path or method the spec lacks is a problem.
import { replyOf } from '../../scripts/conformance/http.js';
import { responseFindings } from '../../scripts/conformance/response-checks.js';
import { schemaErrors } from '../../scripts/conformance/validator.js';
import { routeTable } from '../../server/http/routing/routes.js';
import { ApiSpec } from '../../server/spec-model.js';

export const spec = ApiSpec.load();
/** The server's own route table: which operation a request names. */
export const routes = routeTable(spec);

// The problem schema, dereferenced as the spec model reads it (every operation documents problems).
const PROBLEM = spec.model.operations
  .flatMap((operation) => Object.values(operation.responses))
  .map((response) => response.content['application/problem+json'])
  .find((schema) => schema !== undefined);

/** Throws when the response breaks the spec, naming each failed check. */
export async function checkResponse(method: string, url: string, response: Response): Promise<void> {
  const { pathname } = new URL(url);
  const what = `${method} ${pathname} -> ${response.status}`;
  if (!pathname.startsWith(spec.basePath)) return;
  const route = routes.find(method, pathname.slice(spec.basePath.length));
  // A clone: the caller still reads the body.
  const reply = await replyOf(response.clone());

  if (!reply.headers['x-request-id']) throw new Error(`${what}: no X-Request-Id header`);
  if (!route) {
    const mediaType = reply.headers['content-type']?.split(';')[0]?.trim();
    if (mediaType !== 'application/problem+json') throw new Error(`${what}: content type ${mediaType}`);
    const problem = PROBLEM && schemaErrors(PROBLEM, reply.json);
    if (problem) throw new Error(`${what}: the problem does not match the spec: ${problem}\n${reply.text}`);
    return;
  }
  const failed = responseFindings(route.operation, reply).filter(([, problem]) => problem !== undefined);
  if (failed.length > 0) {
    const findings = failed.map(([check, problem]) => `${check}: ${problem}`).join('\n  ');
    throw new Error(`${what} breaks the spec:\n  ${findings}\n${reply.text}`);
  }
}
