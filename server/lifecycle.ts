// The HTTP server around the app: every connection bounded in time and in number, Node's own errors answered as
// problem+json, and a draining shutdown on SIGTERM/SIGINT that no client notices, behind a load balancer too.
import http, { type IncomingMessage, type RequestListener, type ServerResponse } from 'node:http';
import net, { type Socket } from 'node:net';
import { answerClientErrors, IDLE_TIMEOUT } from './http/pipeline/client-errors.js';
import type { Logger } from './logger.js';

export interface ConnectionLimits {
  /** From a request's first byte to the end of its headers. */
  headersTimeoutMs: number;
  /** From a request's first byte to the end of its body. */
  requestTimeoutMs: number;
  /** A connection with no request under way: before its first byte, and between keep-alive requests. */
  idleTimeoutMs: number;
  /**
   * A connection with a request under way that makes no progress, in either direction, for this long is closed:
   * above all an answer its client does not read (Node's requestTimeout bounds only the receiving).
   */
  sendTimeoutMs: number;
  /** Client connections held at once (max-connections.ts): file descriptors stay free for the database. */
  maxConnections: number;
  /** How long a drain waits for the requests in flight before it cuts them. */
  shutdownGraceMs: number;
  /**
   * On SIGTERM, how long the service keeps accepting and serving while /readyz answers 503, before it stops
   * accepting: the time a load balancer's health checks need to notice and route elsewhere.
   */
  drainDelayMs: number;
}

/**
 * The longest a shutdown takes from its signal, background work included: the drain's delay and grace, within
 * which the job runner must stop too (main.ts), whatever a webhook attempt's own timeout. A supervisor's stop
 * timeout must be longer (test/deploy/deploy-files.test.ts).
 */
export const shutdownBudgetMs = (limits: Pick<ConnectionLimits, 'drainDelayMs' | 'shutdownGraceMs'>): number =>
  limits.drainDelayMs + limits.shutdownGraceMs;

/**
 * Ctrl-C at a terminal: nobody balances load onto a process stopped that way, so it drains at once (and a
 * Ctrl-C during the delay of a SIGTERM ends the delay).
 */
const INTERACTIVE_SIGNAL = 'SIGINT';

/**
 * During a drain, a connection with no request under way is closed once it has been idle this long. Not at
 * once: a keep-alive client may have sent its next request a moment ago, and that request is served (with
 * `Connection: close`) rather than reset.
 */
const DRAIN_IDLE_LINGER_MS = 500;
const DRAIN_SWEEP_MS = 50;

/**
 * SIGTERM's delay is for a balancer's health checks, which ask /readyz again and again: with at least this many
 * /readyz requests within the window (HAProxy every second or two; Kubernetes every 10 s, shared by the workers),
 * something routes by it and must see the 503 first. Otherwise (a plain `docker stop`, a developer's shell, a
 * script that asked once whether the service was up) nobody needs telling, and the drain starts at once.
 */
const WATCHED_PROBES = 2;
const WATCHED_WINDOW_MS = 120_000;

/**
 * Why connections were closed early: a request that made no progress for SEND_TIMEOUT_S; at MAX_CONNECTIONS, one
 * still sending its answer or an idle one closed for a new client, or the new client refused.
 */
type ShedReason = 'stalled_cut' | 'sending_evicted' | 'idle_evicted' | 'refused_at_max';
const NO_SHEDDING: Record<ShedReason, number> = {
  stalled_cut: 0,
  sending_evicted: 0,
  idle_evicted: 0,
  refused_at_max: 0,
};
const SHED_REPORT_MS = 10_000;

const isSending = (connection: Connection): boolean => {
  for (const res of connection.responses) if (res.headersSent) return true;
  return false;
};

interface Connection {
  /**
   * The responses to requests received and not yet answered (more than one when a client pipelines); the
   * parser's errors must not interrupt one whose headers are out.
   */
  responses: Set<ServerResponse>;
  /** Whether a request has arrived yet: until then the idle limit is this module's own timer. */
  used: boolean;
  idleSince: number;
}

export class Lifecycle {
  private draining = false;
  /** Ends the delay before the drain early; set while it runs. */
  private endDelay?: () => void;
  private cut = 0;
  private readonly connections = new Map<Socket, Connection>();
  /** Each response not yet finished, with its request line as it arrived (Express rewrites req.url later). */
  private readonly inFlight = new Map<ServerResponse, { method?: string; path?: string }>();
  private server?: http.Server;
  /** When the latest WATCHED_PROBES /readyz requests arrived. */
  private readonly probes: number[] = [];
  private shedCounts = { ...NO_SHEDDING };
  private shedReport?: NodeJS.Timeout;

  constructor(
    private readonly limits: ConnectionLimits,
    private readonly logger: Logger,
  ) {}

  /** For /readyz: true from the first signal on, so that a load balancer stops routing here. */
  readonly isDraining = (): boolean => this.draining;

  /** An HTTP server for the app with the limits applied, listening on port and host. */
  listen(app: RequestListener, port: number, host: string): http.Server {
    const { headersTimeoutMs, requestTimeoutMs, idleTimeoutMs } = this.limits;
    const server = http.createServer(
      {
        headersTimeout: headersTimeoutMs,
        requestTimeout: requestTimeoutMs,
        // How often Node looks for requests over those limits (30 s by default, longer than the limits).
        connectionsCheckingInterval: Math.max(100, Math.min(1000, headersTimeoutMs / 2)),
        // The app answers a request without Host itself, as problem+json (http/pipeline/request-target.ts).
        requireHostHeader: false,
      },
      // Tracked before the app sees it, so that a response it answers at once already carries Connection: close
      // when draining; one listener, which Node calls without copying a list of them per request.
      (req, res) => {
        this.track(req, res);
        app(req, res);
      },
    );
    server.keepAliveTimeout = idleTimeoutMs;
    // Node sets a socket's timeout to this when a keep-alive connection's next request begins; track() sets it
    // for the first.
    server.timeout = this.limits.sendTimeoutMs;
    const answerClientError = answerClientErrors(this.logger, this.limits, (socket) =>
      [...(this.connections.get(socket as Socket)?.responses ?? [])].some((res) => res.headersSent),
    );
    server.on('clientError', answerClientError);
    // With a listener here, Node leaves timed-out sockets to it: a connection that never completed a request
    // is told so (408); one idle between keep-alive requests is closed without a word, as Node would.
    server.on('timeout', (socket: Socket) => {
      const connection = this.connections.get(socket);
      if (connection && !connection.used) return answerClientError(IDLE_TIMEOUT, socket);
      if (connection && connection.responses.size > 0) this.shed('stalled_cut');
      socket.destroy();
    });
    server.on('connection', (socket: Socket) => {
      if (this.connections.size >= this.limits.maxConnections && !this.makeRoom()) {
        this.shed('refused_at_max');
        socket.destroy();
        return;
      }
      this.connections.set(socket, { responses: new Set(), used: false, idleSince: Date.now() });
      socket.once('close', () => this.connections.delete(socket));
      // Node bounds the wait between keep-alive requests, but not the wait for the first byte.
      socket.setTimeout(idleTimeoutMs);
    });
    this.server = server;
    return server.listen(port, host);
  }

  private track(req: IncomingMessage, res: ServerResponse): void {
    const connection = this.connections.get(req.socket);
    if (connection) {
      // From the first request on, the idle limit is Node's keepAliveTimeout, and this one while a request is on.
      if (!connection.used) req.socket.setTimeout(this.limits.sendTimeoutMs);
      connection.used = true;
      connection.responses.add(res);
    }
    this.inFlight.set(res, { method: req.method, path: req.url });
    if (req.url === '/readyz' || req.url?.startsWith('/readyz?')) {
      this.probes.push(Date.now());
      if (this.probes.length > WATCHED_PROBES) this.probes.shift();
    }
    if (this.draining) res.setHeader('Connection', 'close');
    res.once('close', () => {
      this.inFlight.delete(res);
      if (connection) {
        connection.responses.delete(res);
        connection.idleSince = Date.now();
      }
    });
  }

  /**
   * On the first of these signals: run `onDraining` (background work stops taking more) as /readyz turns 503,
   * drain (after the delay, for a SIGTERM while health checks watch /readyz), run `onStopped` (close the
   * database), and exit 0 once the last request is answered, or 1 when the grace period ran out and requests were
   * cut.
   */
  drainOn(signals: NodeJS.Signals[], onStopped: () => Promise<void>, onDraining: () => void = () => {}): void {
    for (const signal of signals) {
      process.on(signal, () => {
        if (this.draining) {
          if (signal === INTERACTIVE_SIGNAL && this.endDelay) {
            this.logger.info('drain delay cut short', { signal });
            this.endDelay();
          } else {
            this.logger.info('already draining', { signal });
          }
          return;
        }
        const delayMs = signal === INTERACTIVE_SIGNAL || !this.watched() ? 0 : this.limits.drainDelayMs;
        const drained = this.drain(signal, delayMs);
        onDraining();
        drained.then(
          async (code) => {
            await onStopped();
            this.logger.info('stopped', { exit_code: code });
            await this.logger.close();
            process.exit(code);
          },
          async (error: unknown) => {
            this.logger.error('shutdown failed', { error: String(error) });
            await this.logger.close();
            process.exit(1);
          },
        );
      });
    }
  }

  /** Whether a health checker has been asking /readyz lately (see WATCHED_PROBES). */
  private watched(): boolean {
    const oldest = this.probes[0];
    return this.probes.length >= WATCHED_PROBES && oldest !== undefined && Date.now() - oldest <= WATCHED_WINDOW_MS;
  }

  /**
   * Says it is draining (/readyz 503, `Connection: close` on every answer) while it keeps serving for `delayMs`,
   * then stops accepting, lets the requests in flight finish and closes idle connections; resolves with the exit
   * code.
   */
  async drain(signal: string, delayMs = 0): Promise<number> {
    const server = this.server;
    if (!server) return 0;
    this.draining = true;
    this.logger.info('draining', {
      signal,
      delay_s: delayMs / 1000,
      readiness_checked: this.watched(),
      requests_in_flight: this.inFlight.size,
      connections: this.connections.size,
      grace_s: this.limits.shutdownGraceMs / 1000,
    });
    for (const res of this.inFlight.keys()) {
      if (!res.headersSent) res.setHeader('Connection', 'close');
    }
    if (delayMs > 0) {
      // Still accepting: until its health checks see the 503, a balancer keeps sending requests here, and a
      // refused connection would fail them.
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, delayMs);
        this.endDelay = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.endDelay = undefined;
    }
    const started = Date.now();
    this.logger.info('stopped accepting', {
      requests_in_flight: this.inFlight.size,
      connections: this.connections.size,
    });
    return new Promise<number>((resolve) => {
      const sweep = setInterval(() => this.closeIdle(), DRAIN_SWEEP_MS);
      const grace = setTimeout(() => this.cutInFlight(), this.limits.shutdownGraceMs);
      // net's close, not http's: http's also drops idle keep-alive connections at once, racing a request a
      // client may just have sent on one (8 keep-alive clients lost 8 requests so in lifecycle.test.ts), and no
      // documented option of Node's http.Server stops accepting without that. Before any further answer says
      // Connection: close: a client that reconnects then is refused rather than queued by the kernel and reset.
      // The callback runs when the last connection has closed.
      net.Server.prototype.close.call(server, () => {
        clearInterval(sweep);
        clearTimeout(grace);
        this.logger.info('drained', { duration_ms: Date.now() - started, requests_cut: this.cut });
        resolve(this.cut > 0 ? 1 : 0);
      });
      this.closeIdle();
    });
  }

  /**
   * At MAX_CONNECTIONS, closes an idle keep-alive connection, or else the one that has been sending an answer the
   * longest (a client that reads slowly or not at all holds it), so that a new client is served rather than
   * refused; false when every connection is still to send a request or waits for its answer.
   */
  private makeRoom(): boolean {
    let sending: Socket | undefined;
    for (const [socket, connection] of this.connections) {
      if (connection.used && connection.responses.size === 0) return this.evict(socket, 'idle_evicted');
      if (!sending && isSending(connection)) sending = socket;
    }
    return sending !== undefined && this.evict(sending, 'sending_evicted');
  }

  private evict(socket: Socket, why: ShedReason): true {
    this.shed(why);
    // At once: its descriptor is the new connection's room, and a second new one must not pick it again.
    this.connections.delete(socket);
    socket.destroy();
    return true;
  }

  /** Counts a connection cut or refused; one warning per SHED_REPORT_MS says how many and why, not one per connection. */
  private shed(why: ShedReason): void {
    this.shedCounts[why]++;
    if (this.shedReport) return;
    this.shedReport = setTimeout(() => {
      this.shedReport = undefined;
      this.logger.warn('connections cut or refused', {
        ...this.shedCounts,
        send_timeout_s: this.limits.sendTimeoutMs / 1000,
        max_connections: this.limits.maxConnections,
        within_s: SHED_REPORT_MS / 1000,
      });
      this.shedCounts = { ...NO_SHEDDING };
    }, SHED_REPORT_MS);
    this.shedReport.unref();
  }

  private closeIdle(): void {
    const now = Date.now();
    for (const [socket, connection] of this.connections) {
      if (connection.responses.size === 0 && now - connection.idleSince >= DRAIN_IDLE_LINGER_MS) {
        this.logger.debug('idle connection closed by the drain', { idle_ms: now - connection.idleSince });
        socket.destroy();
      }
    }
  }

  private cutInFlight(): void {
    for (const [res, { method, path }] of this.inFlight) {
      this.cut++;
      this.logger.warn('request cut by shutdown', {
        request_id: res.getHeader('x-request-id'),
        method,
        path,
        grace_s: this.limits.shutdownGraceMs / 1000,
      });
    }
    for (const socket of this.connections.keys()) socket.destroy();
  }
}
