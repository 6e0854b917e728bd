// Runs a list of Express middleware as one, the way a route runs its handlers: in order, each calling `next` to go
// on; an error (passed to `next`, thrown, or a rejected promise) skips to the next error handler (four arguments);
// the end of the list calls the caller's `next`. api-routes.ts gives each operation's chain one Express layer
// this way, instead of one per step: Express's route dispatch per step (its layer lookup, method check and
// promise test) was a measurable share of a request's CPU for no behaviour of ours.
import type { ErrorRequestHandler, NextFunction, Request, RequestHandler, Response } from 'express';

export type Layer = RequestHandler | ErrorRequestHandler;

export function inOrder(layers: Layer[]): (req: Request, res: Response, done: NextFunction) => void {
  return (req, res, done) => {
    let index = 0;
    const next = (error?: unknown): void => {
      // The next layer for what came: a plain one, or with an error (as Express: a falsy one is none) an error
      // handler.
      let layer = layers[index++];
      while (layer && (layer.length === 4) !== Boolean(error)) layer = layers[index++];
      if (!layer) {
        done(error);
        return;
      }
      try {
        const out = error
          ? (layer as ErrorRequestHandler)(error, req, res, next)
          : (layer as RequestHandler)(req, res, next);
        if (isThenable(out)) out.then(undefined, (failure) => next(failure || new Error('Rejected promise')));
      } catch (failure) {
        next(failure);
      }
    };
    next();
  };
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as PromiseLike<unknown>).then === 'function';
}
