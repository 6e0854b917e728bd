// Baseline: node:http alone answering the benchmarked space routes with the same SQL as the service
// (scripts/bench/same-sql.ts): the floor under any framework. Run by `npm run bench`: PORT, DATABASE_FILE.
import { createServer, type ServerResponse } from 'node:http';
import { listParams, sameSql } from './same-sql.js';

const db = sameSql(process.env.DATABASE_FILE as string);
const ONE = /^\/api\/v1\/spaces\/(\d+)$/;

function reply(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', ...headers });
  res.end(text);
}

createServer((req, res) => {
  const accountId = db.authenticate(req.headers.authorization);
  if (accountId === undefined) return reply(res, 401, { status: 401 });
  const [path = '', search = ''] = (req.url ?? '').split('?');
  const id = ONE.exec(path)?.[1];
  if (req.method === 'GET' && path === '/api/v1/spaces') {
    return reply(res, 200, db.list(accountId, listParams(new URLSearchParams(search))));
  }
  if (req.method === 'GET' && path === '/api/v1/events') {
    const perPage = Number(new URLSearchParams(search).get('per_page') ?? 10);
    return reply(res, 200, { data: db.events(accountId, perPage).map((row) => JSON.parse(row.payload)) });
  }
  if (req.method === 'DELETE' && id) {
    if (!db.delete(accountId, Number(id))) return reply(res, 404, { status: 404 });
    res.writeHead(204).end();
    return;
  }
  if (req.method === 'GET' && id) {
    const row = db.show(accountId, Number(id));
    return row ? reply(res, 200, { data: row }) : reply(res, 404, { status: 404 });
  }
  if (req.method !== 'POST' && req.method !== 'PATCH') return reply(res, 404, { status: 404 });
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (chunk: string) => {
    body += chunk;
  });
  req.on('end', () => {
    const form = new URLSearchParams(body);
    if (req.method === 'POST' && path === '/api/v1/spaces') {
      const row = db.store(accountId, String(form.get('name')).trim(), Number(form.get('color') ?? 1));
      return reply(res, 201, { data: row }, { Location: `/api/v1/spaces/${row.id}` });
    }
    if (id) {
      const color = form.get('color');
      const row = db.update(accountId, Number(id), form.get('name')?.trim(), color ? Number(color) : undefined);
      return row ? reply(res, 200, { data: row }) : reply(res, 404, { status: 404 });
    }
    reply(res, 404, { status: 404 });
  });
}).listen(Number(process.env.PORT), '127.0.0.1');
