// bench:profile's reading of a `node --cpu-prof` profile (scripts/bench/cpu-profile.ts): samples counted to the
// package, file or function whose code ran, Node's own frames to their nearest caller outside Node, the garbage
// collector and V8 as rows of their own, idle left out of the busy time, bundle frames named by their sources.
import { describe, expect, it } from 'vitest';
import { type CpuProfile, cpuShares } from '../../scripts/bench/cpu-profile.js';

const frame = (functionName: string, url = '', lineNumber = 0) => ({ functionName, url, lineNumber, columnNumber: 0 });

// (root) ─┬ (garbage collector)      (program)
//         ├ (idle)
//         ├ handle  express/lib/router/index.js ── writev (native) ── find  server/db/owned.ts
//         ├ processTicks  node:internal ─┬ hook  @scope/pkg/index.js
//         │                              └ (native, nothing of a package's above it)
//         └ handle  .build/server.mjs (a bundle: server/http/api/dispatch.ts, line 17)
const PROFILE: CpuProfile = {
  nodes: [
    { id: 1, callFrame: frame('(root)'), children: [2, 3, 4, 7, 10, 11] },
    { id: 2, callFrame: frame('(garbage collector)') },
    { id: 3, callFrame: frame('(idle)') },
    { id: 4, callFrame: frame('handle', 'file:///repo/node_modules/express/lib/router/index.js', 40), children: [5] },
    { id: 5, callFrame: frame('writev'), children: [6] },
    { id: 6, callFrame: frame('find', 'file:///repo/server/db/owned.ts', 9) },
    { id: 7, callFrame: frame('processTicks', 'node:internal/process/task_queues'), children: [8, 9] },
    { id: 8, callFrame: frame('hook', 'file:///repo/node_modules/@scope/pkg/index.js', 2) },
    { id: 9, callFrame: frame('runMicrotasks') },
    { id: 10, callFrame: frame('(program)') },
    { id: 11, callFrame: frame('handle', 'file:///repo/.build/server.mjs', 5000) },
  ],
  samples: [2, 3, 5, 5, 6, 8, 9, 10, 11, 3],
  timeDeltas: [100, 1000, 200, 100, 200, 50, 30, 20, 100, 200],
};

const bundle = (f: { url: string; lineNumber: number }) =>
  f.url.endsWith('.build/server.mjs')
    ? { source: 'file:///repo/server/http/api/dispatch.ts', line: 16 }
    : { source: f.url, line: f.lineNumber };

describe('cpuShares', () => {
  it('counts each sample to its package, Node’s own frames to their caller, per request, idle apart', () => {
    const shares = cpuShares(PROFILE, 2, { root: '/repo/', sourceOf: bundle });
    expect(shares.idle).toBe(600);
    expect(shares.busy).toBe(400);
    expect(Object.fromEntries(shares.rows.map((row) => [row.owner, row.microseconds]))).toEqual({
      express: 150,
      'ours: server/db': 100,
      'ours: server/http': 50,
      'garbage collection': 50,
      '@scope/pkg': 25,
      'node (its own stack: HTTP parser, sockets, timers)': 15,
      'V8 (program)': 10,
    });
    expect(shares.rows.map((row) => row.microseconds)).toEqual([150, 100, 50, 50, 25, 15, 10]);
  });

  it('names files, or functions with their line, when asked', () => {
    const byFile = cpuShares(PROFILE, 1, { by: 'file', root: '/repo/', sourceOf: bundle });
    expect(byFile.rows.map((row) => row.owner)).toEqual(
      expect.arrayContaining([
        'express/lib/router/index.js',
        'server/db/owned.ts',
        'server/http/api/dispatch.ts',
        '@scope/pkg/index.js',
      ]),
    );
    const byFunction = cpuShares(PROFILE, 1, { by: 'function', root: '/repo/', sourceOf: bundle });
    expect(byFunction.rows[0]).toEqual({ owner: 'express/lib/router/index.js: handle (line 41)', microseconds: 300 });
    expect(byFunction.rows.map((row) => row.owner)).toContain('server/http/api/dispatch.ts: handle (line 17)');
  });

  it('leaves a bundle’s frames under the bundle without a source map', () => {
    const shares = cpuShares(PROFILE, 1, { by: 'file', root: '/repo/' });
    expect(shares.rows.map((row) => row.owner)).toContain('.build/server.mjs');
  });
});
