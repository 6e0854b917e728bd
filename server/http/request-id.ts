// Gives every request an id: the client's X-Request-Id when it is sane, a new UUID otherwise. The request's
// log line (request-log.ts) and any problem body carry it.
import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';
import { context } from './request-context.js';

const CLIENT_ID = /^[A-Za-z0-9._-]{1,128}$/;

export function requestId(): RequestHandler {
  return (req, res, next) => {
    const given = req.get('x-request-id');
    const id = given && CLIENT_ID.test(given) ? given : randomUUID();
    context(res).requestId = id;
    res.set('X-Request-Id', id);
    next();
  };
}
