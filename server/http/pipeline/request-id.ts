// Gives every request an id: the client's X-Request-Id when it is sane, a new UUID otherwise. The request's
// log line (request-log.ts) and any problem body carry it.
import { randomUUID } from 'node:crypto';
import { context } from '../routing/request-context.js';
import type { RequestStep } from './every-request.js';

const CLIENT_ID = /^[A-Za-z0-9._-]{1,128}$/;

export const requestId: RequestStep = (req, res) => {
  const given = req.headers['x-request-id'];
  const id = typeof given === 'string' && CLIENT_ID.test(given) ? given : randomUUID();
  context(res).requestId = id;
  res.setHeader('X-Request-Id', id);
};
