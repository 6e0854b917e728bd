// Gives every request an id: the client's X-Request-Id when it is sane, a new UUID otherwise.
import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';
import type { Logger } from '../logger.js';
import { context } from './request-context.js';

const CLIENT_ID = /^[A-Za-z0-9._-]{1,128}$/;

export function requestId(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const given = req.get('x-request-id');
    const id = given && CLIENT_ID.test(given) ? given : randomUUID();
    context(res).requestId = id;
    res.set('X-Request-Id', id);
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      logger.info('request', {
        request_id: id,
        method: req.method,
        path: req.path,
        status: res.statusCode,
        duration_ms: Number(process.hrtime.bigint() - started) / 1e6,
        account_id: context(res).account?.id,
      });
    });
    next();
  };
}
