// What the run's key may do, learnt from the deployment's own answers (there is no endpoint that says): an
// operation that served the key (2xx) shows the key holds its scopes; a 403 `insufficient-scope` for a scope not
// shown held means the key lacks it. A check the key cannot make is reported as skipped ("the key lacks X"), not
// failed: a deployment refusing a narrow key is right. A refusal naming a scope the key was seen to hold stays a
// failure.
import type { Operation } from '../../server/spec-model.js';
import type { Exchange } from './http.js';

export class KeyScopes {
  /** Scopes an operation declared that served the key. */
  readonly held = new Set<string>();
  /** Scopes the deployment named in a 403 for scope, not shown held. */
  readonly lacking = new Set<string>();

  /** Learns from one answer to the primary key. */
  observe(operation: Operation, exchange: Exchange): void {
    const { status } = exchange.reply;
    if (status >= 200 && status < 300) for (const scope of operation.scopes) this.held.add(scope);
    const lacks = this.lacks(exchange);
    if (lacks) for (const scope of lacks.split(', ')) this.lacking.add(scope);
  }

  /**
   * The scopes a 403 for scope says the key lacks (X-Accepted-Scopes, less those seen held), or undefined when the
   * answer is no such refusal, or names only scopes the key was seen to hold (then it is a fault of the deployment).
   */
  lacks(exchange: Exchange): string | undefined {
    const { status, headers, json } = exchange.reply;
    if (status !== 403) return undefined;
    const type = String((json as { type?: unknown } | undefined)?.type ?? '');
    const accepted = (headers['x-accepted-scopes'] ?? '')
      .split(',')
      .map((scope) => scope.trim())
      .filter(Boolean);
    if (accepted.length === 0 && !type.endsWith('insufficient-scope')) return undefined;
    const missing = accepted.filter((scope) => !this.held.has(scope));
    if (accepted.length > 0 && missing.length === 0) return undefined;
    return missing.length > 0 ? missing.join(', ') : 'a scope the operation needs';
  }
}
