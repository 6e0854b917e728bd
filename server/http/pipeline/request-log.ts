// One log line per request, written when the answer is finished (or the connection closed before that): the
// request id, method, full URL (the query included: keys travel in headers, never in the URL), headers with
// credentials redacted, URL and headers cut to bounds (both log-values.ts), the peer's address and the
// client's (`req.ip`: the peer's, or with TRUST_PROXY the one its trusted proxies forwarded), status, duration
// in ms, the operation and the account. 5xx at level error, everything else at info, but for
// the health checks a load balancer or supervisor sends every few seconds: their passing answers at debug, their
// failures at warn. The shape is pino-http's; the line is built here because pino-http's two child loggers per
// request cost about a fifth of a show request.
import type { Logger } from '../../logger.js';
import { context } from '../routing/request-context.js';
import type { RequestStep } from './every-request.js';
import { bounded, LOGGED_URL_CHARS, loggedHeaders } from './log-values.js';

/** The health endpoints: checked every few seconds, so a passing check would otherwise flood the log. */
const HEALTH_PATHS = new Set(['/healthz', '/readyz']);

export function requestLog(logger: Logger): RequestStep {
  const log = logger.pino;
  return (req, res) => {
    const started = performance.now();
    // Taken now: routing reads HEAD as GET, and an absolute-form target is rewritten to its path.
    const { method, originalUrl: url, headers } = req;
    const remoteAddress = req.socket.remoteAddress;
    const clientAddress = req.ip;
    // 'close' comes once per response: after it was sent in full, or when the connection closed before that.
    res.once('close', () => {
      const ctx = context(res);
      const statusCode = res.statusCode;
      const line = {
        request_id: ctx.requestId,
        req: {
          id: ctx.requestId,
          method,
          url: bounded(url, LOGGED_URL_CHARS),
          headers: loggedHeaders(headers),
          remoteAddress,
          clientAddress,
        },
        operation_id: ctx.route?.operation.id,
        account_id: ctx.account?.id,
        res: { statusCode },
        duration_ms: Math.round((performance.now() - started) * 10) / 10,
      };
      if (HEALTH_PATHS.has(url.split('?')[0] ?? '')) {
        if (statusCode < 400) log.debug(line, 'request');
        else log.warn(line, 'request');
      } else if (statusCode >= 500) log.error(line, 'request');
      else log.info(line, 'request');
    });
  };
}
