// Requests Node refuses before Express sees them (a malformed request line, a bad Transfer-Encoding, headers
// too large, a request over its time limit) answered like every other error: problem+json with a request id,
// the security headers, logged once.
import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from '../../logger.js';
import { HttpProblem, problemBody } from '../problems/problem.js';
import { FIXED_SECURITY_HEADERS } from './security-headers.js';

interface ParseError extends Error {
  code?: string;
  reason?: string;
}

type Limits = { headersTimeoutMs: number; requestTimeoutMs: number; idleTimeoutMs: number };

function problemFor(error: ParseError, limits: Limits): HttpProblem {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      return new HttpProblem('header-too-large', 'The request headers are larger than the server accepts.');
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return new HttpProblem('content-too-large', 'The chunk extensions of the body are too large.');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new HttpProblem(
        'request-timeout',
        `The request did not arrive in time: a connection waits ${limits.idleTimeoutMs / 1000} s for its first ` +
          `byte, headers ${limits.headersTimeoutMs / 1000} s, a whole request ${limits.requestTimeoutMs / 1000} s.`,
      );
    default: {
      const reason = (error.reason ?? error.message).replace(/^Parse Error: /, '').replace(/\.$/, '');
      return new HttpProblem('malformed-request', `The request is not valid HTTP/1.1: ${reason}.`);
    }
  }
}

/** A timeout as the parser's own, for a connection that has sent no complete request before its idle limit. */
export const IDLE_TIMEOUT: ParseError = Object.assign(new Error('no request within the idle limit'), {
  code: 'ERR_HTTP_REQUEST_TIMEOUT',
});

/**
 * The server's 'clientError' listener. `answering` tells whether an answer to an earlier request on the socket
 * has begun (the server keeps track of its responses: Node's 'clientError' hands over the socket alone).
 */
export function answerClientErrors(
  logger: Logger,
  limits: Limits,
  answering: (socket: Duplex) => boolean,
): (error: ParseError, socket: Duplex) => void {
  return (error, socket) => {
    // A client that went away, or an answer already under way, leaves nothing to say.
    if (error.code === 'ECONNRESET' || !socket.writable || answering(socket)) {
      socket.destroy();
      return;
    }
    const problem = problemFor(error, limits);
    const id = randomUUID();
    const body = JSON.stringify(problemBody(problem, id));
    const headers = {
      'Content-Type': 'application/problem+json; charset=utf-8',
      'Content-Length': String(Buffer.byteLength(body)),
      'X-Request-Id': id,
      ...FIXED_SECURITY_HEADERS,
      Connection: 'close',
    };
    const head = Object.entries(headers)
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('');
    // Closed once the answer is out, whether or not the client ever closes its side.
    socket.end(`HTTP/1.1 ${problem.status} ${STATUS_CODES[problem.status]}\r\n${head}\r\n${body}`, () =>
      socket.destroy(),
    );
    logger.info('request refused by the HTTP parser', {
      request_id: id,
      status: problem.status,
      code: error.code,
      detail: problem.detail,
    });
  };
}
