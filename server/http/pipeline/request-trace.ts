// The server span of a request under the API (started by OpenTelemetry's http instrumentation, which continues an
// incoming traceparent), named and labelled from the route table rather than Express's router: `{METHOD} {route}`
// with the spec's path template, the operation id, the account id, the problem type of a 4xx and the client's
// address as `req.ip` reads it (TRUST_PROXY). Written just before the instrumentation ends the span, at 'finish'.
import type { Tracing } from '../../tracing.js';
import { PROBLEM_TYPE_BASE } from '../problems/problem.js';
import { context } from '../routing/request-context.js';
import type { RequestStep } from './every-request.js';

export function requestTrace({ api }: Tracing, basePath: string): RequestStep {
  return (req, res) => {
    const span = api.trace.getActiveSpan();
    if (!span) return; // outside the API (the health checks, /metrics): not traced
    const method = req.method;
    const clientAddress = req.ip;
    let written = false;
    const annotate = () => {
      if (written) return;
      written = true;
      const ctx = context(res);
      if (ctx.route) {
        const route = `${basePath}${ctx.route.template}`;
        span.updateName(`${method} ${route}`);
        span.setAttribute('http.route', route);
        span.setAttribute('dss.operation.id', ctx.route.operation.id);
      }
      if (ctx.account) span.setAttribute('dss.account.id', ctx.account.id);
      if (clientAddress) span.setAttribute('client.address', clientAddress);
      span.setAttribute('dss.request.id', ctx.requestId);
      if (ctx.problemKind && res.statusCode < 500) {
        span.setAttribute('dss.problem.type', `${PROBLEM_TYPE_BASE}${ctx.problemKind}`);
      }
    };
    // Before the instrumentation's own listeners, which end the span.
    res.prependListener('finish', annotate);
    res.prependListener('close', annotate);
  };
}
