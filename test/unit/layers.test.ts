// inOrder: an operation's chain of middleware run as one layer, as Express's route runs its handlers. Each case is
// what a step of ours or a library's relies on: order, an error (passed, thrown, rejected) reaching the next
// error handler past the plain layers, an error handler passing on or recovering, and the end calling the
// caller's next with what is left.
import type { ErrorRequestHandler, NextFunction, Request, RequestHandler, Response } from 'express';
import { describe, expect, it } from 'vitest';
import { inOrder, type Layer } from '../../server/http/routing/layers.js';

const req = {} as Request;
const res = {} as Response;

/** Runs the layers; resolves with what reached the caller's next (`{ error }`), recording each layer that ran. */
function run(layers: Layer[]): Promise<{ error: unknown }> {
  return new Promise((resolve) => {
    inOrder(layers)(req, res, ((error?: unknown) => resolve({ error })) as NextFunction);
  });
}

const step =
  (ran: string[], name: string): RequestHandler =>
  (_req, _res, next) => {
    ran.push(name);
    next();
  };
const onError =
  (ran: string[], name: string, recover = false): ErrorRequestHandler =>
  (error, _req, _res, next) => {
    ran.push(`${name}(${(error as Error).message})`);
    next(recover ? undefined : error);
  };

describe('inOrder', () => {
  it('runs the plain layers in order, skips error handlers, and ends with no error', async () => {
    const ran: string[] = [];
    const out = await run([step(ran, 'a'), onError(ran, 'skipped'), step(ran, 'b')]);
    expect(ran).toEqual(['a', 'b']);
    expect(out.error).toBeUndefined();
  });

  it.each([
    ['passed to next', ((_req, _res, next) => next(new Error('boom'))) as RequestHandler],
    [
      'thrown',
      (() => {
        throw new Error('boom');
      }) as RequestHandler,
    ],
    ['a rejected promise', (async () => Promise.reject(new Error('boom'))) as unknown as RequestHandler],
  ])('an error %s skips the plain layers to the next error handler', async (_how, failing) => {
    const ran: string[] = [];
    const out = await run([step(ran, 'a'), failing, step(ran, 'skipped'), onError(ran, 'handler'), step(ran, 'b')]);
    expect(ran).toEqual(['a', 'handler(boom)']);
    expect((out.error as Error).message).toBe('boom');
  });

  it('goes on with the plain layers after an error handler that recovers', async () => {
    const ran: string[] = [];
    const out = await run([
      ((_req, _res, next) => next(new Error('boom'))) as RequestHandler,
      onError(ran, 'handler', true),
      step(ran, 'after'),
    ]);
    expect(ran).toEqual(['handler(boom)', 'after']);
    expect(out.error).toBeUndefined();
  });

  it('a promise rejected without a reason still reaches the error handlers as an error', async () => {
    const out = await run([(async () => Promise.reject(undefined)) as unknown as RequestHandler]);
    expect(out.error).toBeInstanceOf(Error);
  });

  it('stops where a layer answers without calling next', async () => {
    const ran: string[] = [];
    let ended = false;
    inOrder([step(ran, 'a'), () => ran.push('answers'), step(ran, 'never')])(req, res, () => {
      ended = true;
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(ran).toEqual(['a', 'answers']);
    expect(ended).toBe(false);
  });
});
