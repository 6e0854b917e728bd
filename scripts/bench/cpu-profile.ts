// Where a CPU profile's time went, in microseconds per request: the samples of `node --cpu-prof` grouped by the
// package whose code ran (or by file, or by function). Node's own functions (`node:` and native frames, a socket's
// writev, a SQLite statement's step) count to their nearest caller that is not Node's; the garbage collector, V8's
// own work and idle time are rows of their own, idle left out of the busy total. A bundle's frames are named by
// the sources its source map gives (the service runs from .build/server.mjs), a package's by its own map.
import { readFileSync } from 'node:fs';
import { SourceMap, type SourceMapping } from 'node:module';
import { fileURLToPath } from 'node:url';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}

/** The parts of a `.cpuprofile` this reads (Chrome DevTools' Profile). */
export interface CpuProfile {
  nodes: Array<{ id: number; callFrame: CallFrame; children?: number[] }>;
  samples: number[];
  timeDeltas: number[];
}

export type Grouping = 'package' | 'file' | 'function';

/** Where a frame's code comes from: a path or URL, and its line (0-based, as profiles count). */
export type SourceOf = (frame: CallFrame) => { source: string; line: number };

export interface CpuShares {
  /** µs of CPU per request, idle left out. */
  busy: number;
  idle: number;
  /** Largest first, µs per request. */
  rows: Array<{ owner: string; microseconds: number }>;
}

const OWN_ROWS: Record<string, string> = {
  '(garbage collector)': 'garbage collection',
  '(program)': 'V8 (program)',
  '(idle)': 'idle',
};

/**
 * The owner of a frame's code: `express` or `@scope/name` for a package (with its file, or file and function),
 * `ours: server/db` for our code by folder (by file or function: the file), undefined for Node's own.
 */
function ownerOf(frame: CallFrame, by: Grouping, sourceOf: SourceOf, root: string): string | undefined {
  const own = OWN_ROWS[frame.functionName];
  if (own && frame.url === '') return own;
  if (frame.url === '' || frame.url.startsWith('node:')) return undefined;
  const { source, line } = sourceOf(frame);
  const path = source.startsWith('file:') ? fileURLToPath(source) : source;
  const inPackage = /node_modules\/((?:@[^/]+\/)?[^/]+)\/(.*)$/.exec(path);
  const file = inPackage ? `${inPackage[1]}/${inPackage[2]}` : path.replace(root, '');
  if (by === 'function') return `${file}: ${frame.functionName || '(anonymous)'} (line ${line + 1})`;
  if (by === 'file') return file;
  if (inPackage) return inPackage[1] as string;
  return `ours: ${file.split('/').slice(0, 2).join('/')}`;
}

export function cpuShares(
  profile: CpuProfile,
  requests: number,
  {
    by = 'package',
    sourceOf = (frame) => ({ source: frame.url, line: frame.lineNumber }),
    root = '',
  }: {
    by?: Grouping;
    sourceOf?: SourceOf;
    /** Our checkout's path with a trailing slash, cut from our files' names. */
    root?: string;
  } = {},
): CpuShares {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parentOf = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
  const owners = new Map<number, string>();
  const owner = (id: number): string => {
    const known = owners.get(id);
    if (known !== undefined) return known;
    const node = byId.get(id);
    const parent = parentOf.get(id);
    const own = node && ownerOf(node.callFrame, by, sourceOf, root);
    const found = own ?? (parent === undefined ? 'node (its own stack: HTTP parser, sockets, timers)' : owner(parent));
    owners.set(id, found);
    return found;
  };
  const totals = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const name = owner(id);
    totals.set(name, (totals.get(name) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  const idle = totals.get('idle') ?? 0;
  totals.delete('idle');
  const busy = [...totals.values()].reduce((sum, value) => sum + value, 0);
  return {
    busy: busy / requests,
    idle: idle / requests,
    rows: [...totals]
      .map(([name, microseconds]) => ({ owner: name, microseconds: microseconds / requests }))
      .sort((a, b) => b.microseconds - a.microseconds),
  };
}

/**
 * Maps the frames of a file that has a source map beside it (`<file>.map`: our bundle's, or a package's own) to
 * their sources; others as they are.
 */
export function bundleSources(): SourceOf {
  const maps = new Map<string, SourceMap | undefined>();
  const mapOf = (url: string) => {
    if (!maps.has(url)) {
      let map: SourceMap | undefined;
      try {
        map = new SourceMap(JSON.parse(readFileSync(new URL(`${url}.map`), 'utf8')));
      } catch {
        map = undefined;
      }
      maps.set(url, map);
    }
    return maps.get(url);
  };
  return (frame) => {
    const map = frame.url.startsWith('file:') ? mapOf(frame.url) : undefined;
    // findEntry answers {} where the map has no entry.
    const entry = map?.findEntry(frame.lineNumber, frame.columnNumber) as
      | SourceMapping
      | Record<string, never>
      | undefined;
    // A map names its sources relative to the file it maps.
    return entry?.originalSource
      ? { source: new URL(entry.originalSource, frame.url).href, line: entry.originalLine }
      : { source: frame.url, line: frame.lineNumber };
  };
}
