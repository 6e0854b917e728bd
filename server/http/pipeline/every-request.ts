// The steps every request takes before routing (request id, log line, metrics, security headers, input bounds,
// request target), run in order as plain calls inside one Express handler: one router layer for all of them
// rather than one each, which the router would match, wrap and call in turn on every request.
import type { Request, RequestHandler, Response } from 'express';

/** A step of every request: it reads or marks the request and its answer, and throws an HttpProblem to refuse it. */
export type RequestStep = (req: Request, res: Response) => void;

export function everyRequest(steps: RequestStep[]): RequestHandler {
  return (req, res, next) => {
    for (const step of steps) step(req, res);
    next();
  };
}
