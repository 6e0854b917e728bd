// Peer: the Express app a team would write from the same libraries the ordinary way, answering like the service
// with its SQL (same-answers.ts). Per request: pino-http's log line (info), helmet's headers, a form or JSON body
// parser, the key lookup, express-rate-limit (in memory, keyed by API key, draft-8 headers), express-openapi-
// validator mounted as its README shows (the spec's request checks, coerced query), the route, an error handler
// that answers problem+json (422 for a bad field, as the service). Run by `npm run bench`: PORT, DATABASE_FILE.
import { fileURLToPath } from 'node:url';
import express, { type NextFunction, type Request, type Response } from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
import { rateLimit } from 'express-rate-limit';
import helmet from 'helmet';
import { pinoHttp } from 'pino-http';
import { type Answer, sameAnswers } from './same-answers.js';

const answers = sameAnswers(process.env.DATABASE_FILE as string);
const spec = fileURLToPath(new URL('../../generated/openapi.yaml', import.meta.url));

const app = express();
app.disable('x-powered-by');
app.set('etag', false);
app.use(pinoHttp());
app.use(helmet());
app.use(express.urlencoded({ extended: false, limit: '16kb' }));
app.use(express.json({ limit: '16kb' }));
app.use('/api/v1', (req, res, next) => {
  const accountId = answers.authenticate(req.get('authorization'));
  if (accountId === undefined) {
    res.status(401).type('application/problem+json').json({
      type: '/problems/unauthenticated',
      title: 'Unauthorized',
      status: 401,
      detail: 'Missing or unknown API key.',
    });
    return;
  }
  res.locals.accountId = accountId;
  next();
});
app.use(
  '/api/v1',
  rateLimit({
    windowMs: 60_000,
    limit: Number(process.env.RATE_LIMIT_REQUESTS ?? 999_999_999),
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    keyGenerator: (req) => req.get('authorization') as string,
  }),
);
// coerceTypes: a form's fields are strings; the option its docs give for coercing bodies (query and path are by default).
app.use(
  OpenApiValidator.middleware({ apiSpec: spec, validateRequests: { coerceTypes: true }, validateResponses: false }),
);

const send = (res: Response, answer: Answer) => {
  if (answer.etag) res.set('ETag', answer.etag);
  if (answer.location) res.location(answer.location);
  res.status(answer.status);
  if (answer.status >= 400) res.type('application/problem+json');
  if (answer.body === undefined) res.end();
  else res.json(answer.body);
};
const sent = (req: Request) =>
  Object.fromEntries(
    new URLSearchParams(req.originalUrl.slice(req.originalUrl.indexOf('?') + 1 || req.originalUrl.length)),
  );

const api = express.Router();
api.get('/spaces', async (req, res) => send(res, await answers.list(res.locals.accountId, req.query, sent(req))));
api.get('/spaces/:id', (req, res) => send(res, answers.show(res.locals.accountId, Number(req.params.id))));
api.post('/spaces', (req, res) => send(res, answers.store(res.locals.accountId, req.body)));
const update = (req: Request, res: Response) =>
  send(res, answers.update(res.locals.accountId, Number(req.params.id), req.body));
api.put('/spaces/:id', update);
api.patch('/spaces/:id', update);
api.delete('/spaces/:id', (req, res) => send(res, answers.delete(res.locals.accountId, Number(req.params.id))));
api.get('/events', async (req, res) => send(res, await answers.events(res.locals.accountId, req.query, sent(req))));
app.use('/api/v1', api);

app.use(
  (
    error: { status?: number; message: string; errors?: Array<{ path: string; message: string }> },
    _req: Request,
    res: Response,
    _next: NextFunction,
  ) => {
    const status = error.status === 400 ? 422 : (error.status ?? 500);
    res
      .status(status)
      .type('application/problem+json')
      .json({
        type: status === 422 ? '/problems/validation' : '/problems/error',
        status,
        detail: error.message,
        errors: error.errors?.map((e) => ({ field: e.path, message: e.message })),
      });
  },
);

app.listen(Number(process.env.PORT), '127.0.0.1');
// The bench's SIGTERM ends the process normally, so that `node --cpu-prof` writes its profile (bench:profile).
process.once('SIGTERM', () => process.exit(0));
