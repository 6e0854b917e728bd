// Baseline: a bare Express app answering the benchmarked space routes with the same SQL as the service
// (scripts/bench/same-sql.ts) and nothing else. Run by `npm run bench` as its own process: PORT, DATABASE_FILE.
import express from 'express';
import { listParams, sameSql } from './same-sql.js';

const db = sameSql(process.env.DATABASE_FILE as string);
const app = express();
app.disable('x-powered-by');
app.set('etag', false);
app.use(express.urlencoded({ extended: false, limit: '16kb' }));

const api = express.Router();
api.use((req, res, next) => {
  const accountId = db.authenticate(req.get('authorization'));
  if (accountId === undefined) {
    res.status(401).json({ status: 401 });
    return;
  }
  res.locals.accountId = accountId;
  next();
});
api.get('/spaces', (req, res) => {
  const query = new URLSearchParams(req.url.slice(req.url.indexOf('?') + 1 || req.url.length));
  res.json(db.list(res.locals.accountId, listParams(query)));
});
api.get('/spaces/:id', (req, res) => {
  const row = db.show(res.locals.accountId, Number(req.params.id));
  if (row) res.json({ data: row });
  else res.status(404).json({ status: 404 });
});
api.post('/spaces', (req, res) => {
  const row = db.store(res.locals.accountId, String(req.body.name).trim(), Number(req.body.color ?? 1));
  res.status(201).location(`/api/v1/spaces/${row.id}`).json({ data: row });
});
api.patch('/spaces/:id', (req, res) => {
  const { name, color } = req.body as { name?: string; color?: string };
  const row = db.update(res.locals.accountId, Number(req.params.id), name?.trim(), color ? Number(color) : undefined);
  if (row) res.json({ data: row });
  else res.status(404).json({ status: 404 });
});
api.delete('/spaces/:id', (req, res) => {
  if (db.delete(res.locals.accountId, Number(req.params.id))) res.status(204).end();
  else res.status(404).json({ status: 404 });
});
api.get('/events', (req, res) => {
  const perPage = Number(
    new URLSearchParams(req.url.slice(req.url.indexOf('?') + 1 || req.url.length)).get('per_page') ?? 10,
  );
  res.json({ data: db.events(res.locals.accountId, perPage).map((row) => JSON.parse(row.payload)) });
});
app.use('/api/v1', api);

app.listen(Number(process.env.PORT), '127.0.0.1');
