// Builds the Express app without listening. One request path:
//   request id -> route (404/405) -> API key (401) -> Accept (406) -> body (415/413/400)
//   -> express-openapi-validator (422) -> handler -> repository; anything thrown -> problem+json.
import express, { type Express } from 'express';
import { sql } from 'kysely';
import type { Database } from './db/database.js';
import { domainFormats } from './domains/fields.js';
import { domainHandlers } from './domains/handlers.js';
import { domainRepository } from './domains/repository.js';
import { requireApiKey } from './http/auth.js';
import { readBody } from './http/body.js';
import { type CorsOrigins, cors } from './http/cors.js';
import { DOCS_PAGE, docsPage, docsSlash } from './http/docs.js';
import { notFoundOutsideApi, problemHandler, reportPendingErrors } from './http/errors.js';
import { dispatch, type Handlers } from './http/operations.js';
import { HttpProblem } from './http/problem.js';
import { requestId } from './http/request-id.js';
import { requireJsonAcceptable, routeToOperation } from './http/routing.js';
import { createValidator } from './http/validation.js';
import { createLogger, type Logger } from './logger.js';
import { spaceFormats } from './spaces/fields.js';
import { spaceHandlers } from './spaces/handlers.js';
import { spaceRepository } from './spaces/repository.js';
import { ApiSpec } from './spec.js';

export interface AppDeps {
  db: Database;
  logger?: Logger;
  spec?: ApiSpec;
  /** Check every JSON response against the spec too (on in tests: a response that breaks it is a 500). */
  validateResponses?: boolean;
  /** Origins whose browser pages may call the API (CORS); any origin by default. */
  corsOrigins?: CorsOrigins;
  /** The API reference page that `npm run docs` builds, served at /docs. */
  docsFile?: string;
}

export async function createApp({
  db,
  logger = createLogger('silent'),
  spec = ApiSpec.load(),
  validateResponses = false,
  corsOrigins = '*',
  docsFile = DOCS_PAGE,
}: AppDeps): Promise<Express> {
  const formats = { ...domainFormats, ...spaceFormats };
  const handlers: Handlers = { ...domainHandlers(domainRepository(db)), ...spaceHandlers(spaceRepository(db)) };

  const app = express();
  app.disable('x-powered-by');
  // Express's own last-resort handler prints stack traces unless its env is "production".
  app.set('env', 'production');
  // No ETags: a 304 is not in the contract, and conditional requests are not offered (yet).
  app.set('etag', false);
  // "/API/V1/domains" must not slip past the validator, which matches paths case-sensitively.
  app.set('case sensitive routing', true);
  app.set('strict routing', true);
  app.set('query parser', 'simple');

  app.use(requestId(logger));
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    try {
      await sql`select 1`.execute(db);
    } catch {
      throw new HttpProblem(503, 'not-ready', 'The database cannot be reached.');
    }
    res.json({ status: 'ready' });
  });
  app.get('/openapi.json', (_req, res) => {
    res.type('application/json').send(spec.json);
  });
  app.get('/openapi.yaml', (_req, res) => {
    res.type('application/yaml').send(spec.yaml);
  });
  app.get('/docs', docsPage(docsFile));
  app.get('/docs/', docsSlash);

  const api = express.Router({ caseSensitive: true, strict: true });
  api.use((_req, res, next) => {
    // Account data: no shared cache may keep it, and browsers must not sniff a type.
    res.set({ 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff' });
    next();
  });
  api.use(cors(spec, corsOrigins), routeToOperation(spec), requireApiKey(db), requireJsonAcceptable, ...readBody());
  app.use(spec.basePath, api);
  app.use(await createValidator(app, spec, formats, validateResponses));
  app.use(spec.basePath, reportPendingErrors, dispatch(handlers));

  app.use(notFoundOutsideApi);
  app.use(problemHandler(spec, formats, logger));
  return app;
}
