// Reading store and update bodies: form (the documented encoding) or JSON, at most 16 KiB. Everything else
// is refused before parsing, and every way a body can fail to be read is a 415, 413 or 400 decided here (the
// validator's own 415, for a media type the operation's spec lacks, is worded alike in request-validation.ts, and
// cannot follow what this step lets through). Form values stay text (validation converts the integer fields);
// JSON is taken as sent.
import { parse } from 'node:querystring';
import express, { type RequestHandler } from 'express';
import type { Schema } from '../../spec-model.js';
import { HttpProblem } from '../problems/problem.js';
import type { Route } from '../routing/routes.js';
import { refuseJsonSentAsForm } from './json-as-form.js';
import { acceptedBodies, FORM, JSON_TYPE } from './media-types.js';
import { decodesAsUtf8 } from './url-encoding.js';

export const BODY_LIMIT_BYTES = 16 * 1024;

const carriesBody = (req: express.Request) =>
  req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;

/** A form's charset parameter, where sent, must be UTF-8 (body-parser's text parser would decode others). */
function isUtf8Form(contentType: string): boolean {
  for (const parameter of contentType.split(';').slice(1)) {
    const [name = '', value = ''] = parameter.split('=');
    if (name.trim().toLowerCase() !== 'charset') continue;
    const charset = value.trim().replace(/^"|"$/g, '').toLowerCase();
    if (charset !== 'utf-8' && charset !== 'utf8') return false;
  }
  return true;
}

const acceptOnlyDocumentedTypes =
  (bodies: Route['bodies']): RequestHandler =>
  (req, _res, next) => {
    if (!carriesBody(req)) {
      // No body reads as an empty JSON object, so the validator reports the missing required fields (422)
      // rather than a missing content type.
      req.headers['content-type'] = JSON_TYPE;
      req.body = {};
      return next();
    }
    const type = req.is([FORM, JSON_TYPE]);
    if (type === FORM && !isUtf8Form(req.get('content-type') ?? '')) {
      throw new HttpProblem('unsupported-media-type', 'The body must be encoded in UTF-8.');
    }
    if (!type) {
      const sent = req.get('content-type');
      const accepted = acceptedBodies(Object.keys(bodies));
      throw new HttpProblem(
        'unsupported-media-type',
        sent
          ? `Content-Type "${sent}" is not supported. ${accepted}`
          : `A body without a Content-Type is not supported. ${accepted}`,
      );
    }
    next();
  };

/**
 * A form as body-parser reads it as text, then parsed once by node's querystring: body-parser's own form
 * parser (qs) drops "__proto__", which is an unknown field like any other and must be named in the 422.
 */
const fieldsOfForm =
  (bodies: Route['bodies']): RequestHandler =>
  (req, _res, next) => {
    // Only the form's reader leaves text: the JSON one (strict) makes an object or an array, or refuses the body.
    if (typeof req.body !== 'string') return next();
    const text = req.body;
    let fields = text === '' ? 0 : 1;
    for (let at = text.indexOf('&'); at >= 0 && fields <= MAX_FORM_FIELDS; at = text.indexOf('&', at + 1)) fields++;
    if (fields > MAX_FORM_FIELDS) throw new HttpProblem('content-too-large', 'The form has too many fields.');
    req.body = gatherBracketFields({ ...parse(text) }, bodies[FORM]);
    next();
  };

/**
 * A form's `metadata[key]=value` fields gathered into one object field `metadata`, as Stripe's forms send an
 * object (the spec's deepObject encoding), for each object property of the form's schema; other fields as sent.
 */
function gatherBracketFields(fields: Record<string, unknown>, schema: Schema | undefined): Record<string, unknown> {
  const properties = (schema?.properties ?? {}) as Record<string, Schema>;
  const objects = Object.keys(properties).filter((name) => properties[name]?.type === 'object');
  if (objects.length === 0) return fields;
  const gathered: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(fields)) {
    const bracket = name.indexOf('[');
    const base = bracket > 0 && name.endsWith(']') ? name.slice(0, bracket) : undefined;
    if (base === undefined || !objects.includes(base)) {
      Object.defineProperty(gathered, name, { value, enumerable: true, writable: true, configurable: true });
      continue;
    }
    if (gathered[base] === undefined) gathered[base] = Object.create(null);
    const inner = gathered[base];
    if (typeof inner === 'object' && inner !== null)
      (inner as Record<string, unknown>)[name.slice(bracket + 1, -1)] = value;
  }
  return gathered;
}

const MAX_FORM_FIELDS = 100;

/**
 * The form parser keeps an escape that is not UTF-8 (Latin-1 "%E4rger") as the literal text "%E4rger";
 * such a body is unreadable rather than a name to store.
 */
const refuseInvalidPercentEncoding =
  (bodies: Route['bodies']) =>
  (_req: object, _res: express.Response, raw: Buffer): void => {
    refuseJsonSentAsForm(raw, FORM in bodies);
    const text = raw.toString('utf8');
    // Raw UTF-8 (not %-escaped) is what a browser never sends but curl -d may: it is read as sent.
    if (!decodesAsUtf8(text.replace(/[^\x20-\x7e]/gu, ''))) {
      // body-parser passes this on with its type, which BODY_ERRORS turns into a 400.
      throw Object.assign(new Error('form body is not UTF-8'), { type: 'form.encoding.invalid' });
    }
  };

// body-parser's error types, by what they mean for the client.
const BODY_ERRORS: Record<string, () => HttpProblem> = {
  'entity.parse.failed': () => new HttpProblem('malformed-body', 'The request body is not valid JSON.'),
  'request.aborted': () => new HttpProblem('malformed-body', 'The request body was cut short.'),
  'request.size.invalid': () =>
    new HttpProblem('malformed-body', 'The request body is shorter or longer than its Content-Length.'),
  'entity.too.large': () =>
    new HttpProblem('content-too-large', `The request body is larger than ${BODY_LIMIT_BYTES} bytes.`),
  'parameters.too.many': () => new HttpProblem('content-too-large', 'The form has too many fields.'),
  'charset.unsupported': () => new HttpProblem('unsupported-media-type', 'The body must be encoded in UTF-8.'),
  'form.encoding.invalid': () =>
    new HttpProblem('malformed-body', 'The form body has a malformed %-escape, or one that is not UTF-8.'),
  'encoding.unsupported': () =>
    new HttpProblem('unsupported-media-type', 'The Content-Encoding of the body is not supported.'),
};

/** A body-parser parser whose failures leave it as problems (anything unforeseen stays an error: a 500). */
function answeringProblems(parser: RequestHandler): RequestHandler {
  return (req, res, next) => {
    parser(req, res, (error?: unknown) => {
      if (error === undefined || error instanceof HttpProblem) return next(error);
      const problem = BODY_ERRORS[(error as { type?: string } | null)?.type ?? ''];
      if (problem) return next(problem());
      // body-parser passes zlib's and brotli's own error on with status 400 and no type of its own: a body that
      // does not decompress as its Content-Encoding says.
      const encoding = req.get('content-encoding');
      if (encoding && (error as { status?: number } | null)?.status === 400) {
        return next(
          new HttpProblem(
            'malformed-body',
            `The request body is not what its Content-Encoding header says (${encoding}): it does not decompress. Send it encoded as the header says, or without Content-Encoding.`,
          ),
        );
      }
      next(error);
    });
  };
}

/** Reads the body of an operation that takes one (its route has this step; the others have none). */
export function readBody({ bodies }: Route): RequestHandler[] {
  return [
    acceptOnlyDocumentedTypes(bodies),
    answeringProblems(
      express.text({ limit: BODY_LIMIT_BYTES, type: FORM, verify: refuseInvalidPercentEncoding(bodies) }),
    ),
    answeringProblems(express.json({ limit: BODY_LIMIT_BYTES, strict: true, type: JSON_TYPE })),
    fieldsOfForm(bodies),
  ];
}
