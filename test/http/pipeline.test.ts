// The step sequence that runs the app's and /api/v1's steps (server/http/pipeline.ts) keeps the promises of
// Express's router: order, error handlers only after a failure, throws and rejections as failures, and what is
// left over handed on.
import type { ErrorRequestHandler, Request, RequestHandler, Response } from 'express';
import { describe, expect, it } from 'vitest';
import { pipeline, type Step } from '../../server/http/pipeline.js';

/** Runs the steps on a request; resolves with what reached the app's next handler, and the steps' trace. */
function run(steps: (trace: string[]) => Step[]): Promise<{ left: unknown; trace: string[] }> {
  const trace: string[] = [];
  return new Promise((resolve) => {
    pipeline(steps(trace))({} as Request, {} as Response, (left?: unknown) => resolve({ left, trace }));
  });
}

const step =
  (trace: string[], name: string): RequestHandler =>
  (_req, _res, next) => {
    trace.push(name);
    next();
  };
const catcher =
  (trace: string[], name: string): ErrorRequestHandler =>
  (error, _req, _res, next) => {
    trace.push(`${name}(${String((error as Error).message ?? error)})`);
    next(error);
  };

describe('pipeline', () => {
  it('runs the steps in order, skips error handlers while all is well, and hands on an unanswered request', async () => {
    const { left, trace } = await run((t) => [step(t, 'a'), catcher(t, 'c'), step(t, 'b')]);
    expect(trace).toEqual(['a', 'b']);
    expect(left).toBeUndefined();
  });

  it('after a throw, skips to the error handlers and hands the failure on', async () => {
    const failure = new Error('boom');
    const { left, trace } = await run((t) => [
      step(t, 'a'),
      () => {
        throw failure;
      },
      step(t, 'skipped'),
      catcher(t, 'c'),
      step(t, 'skipped too'),
    ]);
    expect(trace).toEqual(['a', 'c(boom)']);
    expect(left).toBe(failure);
  });

  it('takes a rejected promise as a failure, even one rejected with nothing or a falsy value', async () => {
    const rejected = await run((t) => [async () => Promise.reject(new Error('late')), step(t, 'skipped')]);
    expect((rejected.left as Error).message).toBe('late');
    expect(rejected.trace).toEqual([]);
    for (const nothing of [undefined, 0]) {
      const empty = await run(() => [async () => Promise.reject(nothing)]);
      expect((empty.left as Error).message).toBe('Rejected promise');
    }
  });

  it('lets an error handler recover: calling next() without an error goes back to the plain steps', async () => {
    const { left, trace } = await run((t) => [
      ((_req, _res, next) => next(new Error('first'))) as RequestHandler,
      (_error: unknown, _req: Request, _res: Response, next: (error?: unknown) => void) => {
        t.push('recovered');
        next();
      },
      step(t, 'b'),
    ]);
    expect(trace).toEqual(['recovered', 'b']);
    expect(left).toBeUndefined();
  });
});
