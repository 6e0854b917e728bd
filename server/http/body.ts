// Reading store and update bodies: form (the documented encoding) or JSON, at most 16 KiB. Everything else
// is refused before parsing. Form values are strings, so fields the spec types as integers are converted here;
// JSON is taken as sent, so JSON {"color": "3"} is a type error rather than silently 3.
import express, { type RequestHandler } from 'express';
import { PLAIN_INTEGER } from '../spec.js';
import { HttpProblem } from './problem.js';
import { context } from './request-context.js';

export const BODY_LIMIT_BYTES = 16 * 1024;
export const FORM = 'application/x-www-form-urlencoded';
export const JSON_TYPE = 'application/json';

const carriesBody = (req: express.Request) =>
  req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;

const acceptOnlyDocumentedTypes: RequestHandler = (req, res, next) => {
  if (!context(res).route?.operation.requestBody) return next();
  if (!carriesBody(req)) {
    // No body reads as an empty JSON object, so the validator reports the missing required fields (422)
    // rather than a missing content type.
    req.headers['content-type'] = JSON_TYPE;
    req.body = {};
    return next();
  }
  if (!req.is([FORM, JSON_TYPE])) {
    const sent = req.get('content-type');
    throw new HttpProblem(
      415,
      'unsupported-media-type',
      `${sent ? `Content-Type "${sent}" is` : 'A body without a Content-Type is'} not supported; send ${FORM} or ${JSON_TYPE}.`,
    );
  }
  next();
};

const integerFieldsOfForm: RequestHandler = (req, res, next) => {
  const fields = context(res).route?.formIntegerFields ?? [];
  if (!req.is(FORM) || typeof req.body !== 'object' || req.body === null) return next();
  const body = req.body as Record<string, unknown>;
  for (const name of fields) {
    const value = body[name];
    // Only the plain spelling becomes a number; "03" or "+3" stays text and fails validation as such.
    if (typeof value === 'string' && PLAIN_INTEGER.test(value)) body[name] = Number(value);
  }
  next();
};

/**
 * The form parser keeps an escape that is not UTF-8 (Latin-1 "%E4rger") as the literal text "%E4rger";
 * such a body is unreadable rather than a name to store.
 */
function refuseInvalidPercentEncoding(_req: unknown, _res: unknown, raw: Buffer): void {
  for (const part of raw.toString('utf8').split('&')) {
    try {
      decodeURIComponent(part.replace(/\+/g, ' '));
    } catch {
      // body-parser passes this on with its type, which the error handler turns into a 400.
      throw Object.assign(new Error('form body is not UTF-8'), { type: 'form.encoding.invalid' });
    }
  }
}

export function readBody(): RequestHandler[] {
  return [
    acceptOnlyDocumentedTypes,
    express.urlencoded({
      extended: false,
      limit: BODY_LIMIT_BYTES,
      parameterLimit: 100,
      type: FORM,
      verify: refuseInvalidPercentEncoding,
    }),
    express.json({ limit: BODY_LIMIT_BYTES, strict: true, type: JSON_TYPE }),
    integerFieldsOfForm,
  ];
}
