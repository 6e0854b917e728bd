// A fixed sequence of request steps as one Express handler. Express's router would match a path, trim a prefix
// and look for parameters at every step; these steps have no path of their own, so the sequence only has to
// do what the router promises them: run in order, skip the error handlers (four parameters) while all is well
// and everything else once a step has failed, turn a throw or a rejected promise into that failure, and hand
// what is left over (an unanswered request, or a failure no step handled) to the app's next handler.
import type { ErrorRequestHandler, NextFunction, RequestHandler } from 'express';

export type Step = RequestHandler | ErrorRequestHandler;

export function pipeline(steps: readonly Step[]): RequestHandler {
  const handlesErrors = steps.map((step) => step.length === 4);
  return (req, res, done) => {
    let index = 0;
    const next = ((error?: unknown) => {
      // As in Express, a falsy error is none (and a promise rejected with one fails all the same, below).
      const failed = Boolean(error);
      while (index < steps.length) {
        const at = index++;
        if (handlesErrors[at] !== failed) continue;
        try {
          const returned = failed
            ? (steps[at] as ErrorRequestHandler)(error, req, res, next)
            : (steps[at] as RequestHandler)(req, res, next);
          if (returned instanceof Promise) {
            returned.catch((rejection: unknown) => next(rejection || new Error('Rejected promise')));
          }
        } catch (thrown) {
          next(thrown);
        }
        return;
      }
      done(failed ? error : undefined);
    }) as NextFunction;
    next();
  };
}
