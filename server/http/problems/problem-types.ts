// GET /problems/<kind>: a problem's `type` URI, opened, leads to its entry in the docs' "Problem types" table.
// The kinds are the anchors of that table in the spec's guide, so documenting a new kind is one table row.
import type { RequestHandler } from 'express';
import type { ApiSpec } from '../../spec-model.js';
import { HttpProblem } from './problem.js';

/** The kinds the spec's guide documents: each `<a id="problem-<kind>">` anchor. */
export function documentedProblemKinds(spec: ApiSpec): Set<string> {
  const info = spec.document.info as { description?: string } | undefined;
  return new Set([...(info?.description ?? '').matchAll(/<a id="problem-([a-z0-9-]+)"><\/a>/g)].map((m) => m[1] ?? ''));
}

/** 303 See Other to the kind's entry in /docs; 404 for a kind that is not documented. */
export function problemTypePage(spec: ApiSpec): RequestHandler {
  const kinds = documentedProblemKinds(spec);
  return (req, res) => {
    const kind = req.params.kind as string;
    if (!kinds.has(kind)) {
      throw new HttpProblem(
        'not-found',
        `There is no problem type ${kind}; /docs#section/Problem-types lists them all.`,
      );
    }
    res.redirect(303, `/docs#problem-${kind}`);
  };
}
