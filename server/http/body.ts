// Reading store and update bodies: form (the documented encoding) or JSON, at most 16 KiB. Everything else
// is refused before parsing. Form values are strings, so fields the spec types as integers are converted here;
// JSON is taken as sent, so JSON {"color": "3"} is a type error rather than silently 3.
import { parse } from 'node:querystring';
import express, { type RequestHandler } from 'express';
import { integerOutOfRange, PLAIN_INTEGER } from '../spec.js';
import { refuseJsonSentAsForm } from './json-as-form.js';
import { HttpProblem } from './problem.js';
import { context } from './request-context.js';
import { decodesAsUtf8 } from './url-encoding.js';

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
      sent
        ? `Content-Type "${sent}" is not supported; send ${FORM} or ${JSON_TYPE}.`
        : `A body without a Content-Type is not supported: send "Content-Type: ${JSON_TYPE}" with JSON, or "Content-Type: ${FORM}" with a form.`,
    );
  }
  next();
};

const RAW_FORM = Symbol('raw form body');

const fieldsOfForm: RequestHandler = (req, res, next) => {
  const ctx = context(res);
  const fields = ctx.route?.formIntegerFields ?? [];
  const raw = (req as { [RAW_FORM]?: string })[RAW_FORM];
  if (!req.is(FORM) || raw === undefined) return next();
  // Every field as sent, read again by node's querystring: body-parser's qs drops "__proto__", which is an
  // unknown field like any other.
  const body: Record<string, unknown> = Object.fromEntries(Object.entries(parse(raw)));
  req.body = body;
  for (const { name, bounds } of fields) {
    const value = body[name];
    // Only the plain spelling becomes a number; "03" or "+3" stays text and fails validation as such.
    if (typeof value !== 'string' || !PLAIN_INTEGER.test(value)) continue;
    // Out of range, it stays text too (no Infinity), and the range is what the client is told.
    const outOfRange = integerOutOfRange(value, bounds);
    if (outOfRange)
      ctx.pendingErrors = [...(ctx.pendingErrors ?? []), { location: 'body', field: name, message: outOfRange }];
    else body[name] = Number(value);
  }
  next();
};

/**
 * The form parser keeps an escape that is not UTF-8 (Latin-1 "%E4rger") as the literal text "%E4rger";
 * such a body is unreadable rather than a name to store.
 */
function refuseInvalidPercentEncoding(req: object, _res: unknown, raw: Buffer): void {
  refuseJsonSentAsForm(raw);
  const text = raw.toString('utf8');
  (req as { [RAW_FORM]?: string })[RAW_FORM] = text;
  // Raw UTF-8 (not %-escaped) is what a browser never sends but curl -d may: it is read as sent.
  if (!decodesAsUtf8(text.replace(/[^\x20-\x7e]/gu, ''))) {
    // body-parser passes this on with its type, which the error handler turns into a 400.
    throw Object.assign(new Error('form body is not UTF-8'), { type: 'form.encoding.invalid' });
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
    fieldsOfForm,
  ];
}
