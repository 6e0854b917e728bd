// One log line per request, by pino-http: the request id, method, full URL (the query included: keys travel
// in headers, never in the URL), headers with credentials redacted (see logger.ts), status, duration in ms,
// the operation and the account. 5xx at level error, everything else at info.
import type { RequestHandler } from 'express';
import { pinoHttp } from 'pino-http';
import { type Logger, pinoOf } from '../logger.js';
import { context } from './request-context.js';

export function requestLog(logger: Logger): RequestHandler {
  return pinoHttp({
    logger: pinoOf(logger),
    // The id request-id.ts chose (the client's X-Request-Id when sane): the one in the problem body.
    genReqId: (_req, res) => context(res as never).requestId,
    customAttributeKeys: { reqId: 'request_id', responseTime: 'duration_ms' },
    quietReqLogger: true,
    // pino's standard shapes, less what is empty when the line's bindings are made (query, params).
    serializers: {
      req: ({ id, method, url, headers, remoteAddress }: Record<string, unknown>) => ({
        id,
        method,
        url,
        headers,
        remoteAddress,
      }),
      res: ({ statusCode }: { statusCode: number }) => ({ statusCode }),
    },
    customProps: (_req, res) => {
      const ctx = context(res as never);
      return { operation_id: ctx.route?.operation.operationId, account_id: ctx.account?.id };
    },
    customLogLevel: (_req, res, error) => (error || res.statusCode >= 500 ? 'error' : 'info'),
    customSuccessMessage: () => 'request',
    customErrorMessage: () => 'request',
  }) as unknown as RequestHandler;
}
