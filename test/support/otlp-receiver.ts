// A tiny OpenTelemetry collector for tests: OTLP/HTTP with JSON bodies (OTEL_EXPORTER_OTLP_PROTOCOL=http/json) on
// 127.0.0.1 port 0. Keeps every span it is sent, flattened (ids in hex, attributes as plain values), and every
// body as it arrived, so that a test can search all of them for text that must never leave.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ExportedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  /** The spans this one links to (a group COMMIT's: the writes it made durable). */
  links?: Array<{ traceId: string; spanId: string }>;
  attributes: Record<string, unknown>;
  resource: Record<string, unknown>;
}

export interface OtlpReceiver {
  /** The base URL, for OTEL_EXPORTER_OTLP_ENDPOINT (the exporter adds /v1/traces). */
  url: string;
  spans: ExportedSpan[];
  /** Every request body received, as text. */
  bodies: string[];
  /** Resolves with the spans once `predicate` holds on them, polling; rejects after `timeoutMs`. */
  until(predicate: (spans: ExportedSpan[]) => boolean, timeoutMs?: number): Promise<ExportedSpan[]>;
  close(): Promise<void>;
}

type AnyValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
type KeyValue = { key: string; value: AnyValue };

const plainValue = (value: AnyValue): unknown =>
  value.stringValue ?? (value.intValue === undefined ? (value.boolValue ?? value.doubleValue) : Number(value.intValue));
const attributesOf = (list: KeyValue[] = []) =>
  Object.fromEntries(list.map(({ key, value }) => [key, plainValue(value)]));

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ExportedSpan[] = [];
  const bodies: string[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      body += chunk;
    });
    req.on('end', () => {
      bodies.push(body);
      try {
        const { resourceSpans = [] } = JSON.parse(body) as {
          resourceSpans?: Array<{
            resource?: { attributes?: KeyValue[] };
            scopeSpans?: Array<{
              spans?: Array<Omit<ExportedSpan, 'attributes' | 'resource'> & { attributes?: KeyValue[] }>;
            }>;
          }>;
        };
        for (const { resource, scopeSpans = [] } of resourceSpans) {
          for (const { spans: sent = [] } of scopeSpans) {
            for (const span of sent) {
              spans.push({
                ...span,
                parentSpanId: span.parentSpanId ?? '',
                attributes: attributesOf(span.attributes),
                resource: attributesOf(resource?.attributes),
              });
            }
          }
        }
      } catch {
        // Not JSON: kept in `bodies` only.
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    bodies,
    async until(predicate, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(spans)) {
        if (Date.now() > deadline) throw new Error(`the spans expected did not arrive in ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return spans;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
