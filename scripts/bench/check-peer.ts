// Before any figure: a typical-stack peer must answer the benchmarked requests like the service (same status,
// media type and body; for writes the same record but its id and times; for a page with a sealed cursor the same
// records and a next link to the same place, as a sealed cursor differs each time) and validate like it (a bad
// field is a 422 naming it, a missing key a 401). Throws with every difference found.
import { isDeepStrictEqual } from 'node:util';
import type { Target } from './targets.js';

interface Probe {
  what: string;
  method: string;
  path: string;
  body?: string;
  key: 'reader' | 'writer' | 'none';
  /**
   * 'same': the whole body; 'record': data without id and times; 'page': data, and links.next but its sealed
   * cursor; a field name: a problem naming it. A path with `{stored}` names a space the target stores first.
   */
  compare: 'same' | 'record' | 'page' | 'status' | { names: string };
}

const PROBES: Probe[] = [
  { what: 'show', method: 'GET', path: '/spaces/7', key: 'reader', compare: 'same' },
  { what: 'list', method: 'GET', path: '/spaces', key: 'reader', compare: 'same' },
  { what: 'search', method: 'GET', path: '/spaces?search=ace%201', key: 'reader', compare: 'same' },
  { what: 'name sort', method: 'GET', path: '/spaces?sort_by=name&sort=asc', key: 'reader', compare: 'same' },
  { what: 'page 3', method: 'GET', path: '/spaces?page=3&per_page=25', key: 'reader', compare: 'same' },
  {
    what: 'store',
    method: 'POST',
    path: '/spaces',
    body: 'name=+Checked+space&color=3',
    key: 'writer',
    compare: 'record',
  },
  {
    what: 'update',
    method: 'PATCH',
    path: '/spaces/1',
    body: 'name=Checked+again&color=4',
    key: 'writer',
    compare: 'record',
  },
  { what: 'bad per_page', method: 'GET', path: '/spaces?per_page=7', key: 'reader', compare: { names: 'per_page' } },
  {
    what: 'bad color',
    method: 'POST',
    path: '/spaces',
    body: 'name=x&color=9',
    key: 'writer',
    compare: { names: 'color' },
  },
  { what: 'no name', method: 'POST', path: '/spaces', body: 'color=2', key: 'writer', compare: { names: 'name' } },
  {
    what: 'unknown field',
    method: 'POST',
    path: '/spaces',
    body: 'name=x&colour=2',
    key: 'writer',
    compare: { names: 'colour' },
  },
  { what: 'no key', method: 'GET', path: '/spaces', key: 'none', compare: 'status' },
  { what: 'delete', method: 'DELETE', path: '/spaces/{stored}', key: 'writer', compare: 'status' },
  { what: 'delete again', method: 'DELETE', path: '/spaces/{stored}', key: 'writer', compare: 'status' },
  { what: 'events', method: 'GET', path: '/events', key: 'reader', compare: 'page' },
  { what: 'events, 25', method: 'GET', path: '/events?per_page=25', key: 'reader', compare: 'page' },
];

async function call(
  target: Target,
  probe: Probe,
  keys: { reader: string; writer: string },
  stored: () => Promise<number>,
) {
  const headers: Record<string, string> = {};
  if (probe.key !== 'none') headers.Authorization = `Bearer ${keys[probe.key]}`;
  if (probe.body !== undefined) headers['Content-Type'] = 'application/x-www-form-urlencoded';
  const path = probe.path.includes('{stored}') ? probe.path.replace('{stored}', String(await stored())) : probe.path;
  const response = await fetch(`${target.base}${path}`, { method: probe.method, headers, body: probe.body });
  const text = await response.text();
  return {
    status: response.status,
    type: (response.headers.get('content-type') ?? '').split(';')[0],
    etag: response.headers.get('etag'),
    body: text === '' ? undefined : JSON.parse(text),
  };
}

/** A space the target stores, to be deleted: the same one for every probe of a run against that target. */
function storedBy(target: Target, keys: { writer: string }): () => Promise<number> {
  let id: Promise<number> | undefined;
  return () => {
    id ??= fetch(`${target.base}/spaces`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${keys.writer}`, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'name=To+be+deleted',
    }).then(async (response) => ((await response.json()) as { data: { id: number } }).data.id);
    return id;
  };
}

/** A page's links.next without its sealed cursor: where it leads, with which other parameters. */
const nextWithoutCursor = (body: { links?: { next?: string | null } } | undefined) => {
  const next = body?.links?.next;
  if (typeof next !== 'string') return next;
  const url = new URL(next, 'http://x');
  const cursor = url.searchParams.get('after');
  url.searchParams.delete('after');
  return { path: url.pathname, query: url.searchParams.toString(), sealed: cursor !== null && cursor.length > 20 };
};

const withoutIdAndTimes = (body: { data?: Record<string, unknown> } | undefined) => {
  const { id: _id, created_at: _c, updated_at: _u, ...rest } = body?.data ?? {};
  return rest;
};

export async function checkPeer(
  service: Target,
  peer: Target,
  keys: { reader: string; writer: string },
): Promise<void> {
  const problems: string[] = [];
  const ours = storedBy(service, keys);
  const peers = storedBy(peer, keys);
  for (const probe of PROBES) {
    const mine = await call(service, probe, keys, ours);
    const theirs = await call(peer, probe, keys, peers);
    const differ = (what: string) => problems.push(`${probe.what} (${probe.method} ${probe.path}): ${what}`);
    if (mine.status !== theirs.status) differ(`status ${theirs.status}, the service's ${mine.status}`);
    if (mine.type !== theirs.type) differ(`Content-Type ${theirs.type}, the service's ${mine.type}`);
    if (probe.compare === 'same' && !isDeepStrictEqual(mine.body, theirs.body))
      differ(
        `body ${JSON.stringify(theirs.body).slice(0, 400)}\n  the service's ${JSON.stringify(mine.body).slice(0, 400)}`,
      );
    if (probe.compare === 'same' && (mine.etag === null) !== (theirs.etag === null))
      differ(`ETag ${theirs.etag}, the service's ${mine.etag}`);
    if (probe.compare === 'record' && !isDeepStrictEqual(withoutIdAndTimes(mine.body), withoutIdAndTimes(theirs.body)))
      differ(`record ${JSON.stringify(theirs.body)}, the service's ${JSON.stringify(mine.body)}`);
    if (
      probe.compare === 'page' &&
      !(
        isDeepStrictEqual(mine.body?.data, theirs.body?.data) &&
        isDeepStrictEqual(nextWithoutCursor(mine.body), nextWithoutCursor(theirs.body))
      )
    )
      differ(
        `page ${JSON.stringify(theirs.body).slice(0, 400)}\n  the service's ${JSON.stringify(mine.body).slice(0, 400)}`,
      );
    if (typeof probe.compare === 'object' && !JSON.stringify(theirs.body ?? '').includes(probe.compare.names))
      differ(`the problem does not name ${probe.compare.names}: ${JSON.stringify(theirs.body)}`);
  }
  if (problems.length > 0)
    throw new Error(`${peer.name} does not answer like the service:\n- ${problems.join('\n- ')}`);
}
