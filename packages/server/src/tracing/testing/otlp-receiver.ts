import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A span as OTLP/JSON carries it (opentelemetry-proto `trace/v1/trace.proto`, JSON mapping with hex ids). */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  /** 1 internal, 2 server, 3 client. */
  kind: number;
  attributes: Record<string, unknown>;
  status?: { code?: number };
  serviceName: string;
}

interface OtlpAttribute {
  key: string;
  value: Record<string, unknown>;
}

/** A local OTLP/HTTP collector for tests: accepts `POST /v1/traces` (JSON) and keeps every span it received. */
export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  readonly contentTypes: string[] = [];

  private constructor(private readonly server: Server) {}

  static async start(): Promise<OtlpReceiver> {
    let receiver!: OtlpReceiver;
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        receiver.contentTypes.push(req.headers['content-type'] ?? '');
        if (req.method === 'POST' && req.url === '/v1/traces')
          receiver.accept(Buffer.concat(chunks).toString());
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    receiver = new OtlpReceiver(server);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private accept(text: string): void {
    const body = JSON.parse(text) as {
      resourceSpans: Array<{
        resource: { attributes: OtlpAttribute[] };
        scopeSpans: Array<{
          spans: Array<Omit<ReceivedSpan, 'attributes' | 'serviceName'> & { attributes?: OtlpAttribute[] }>;
        }>;
      }>;
    };
    for (const resourceSpans of body.resourceSpans) {
      const resource = attributesOf(resourceSpans.resource.attributes);
      for (const scope of resourceSpans.scopeSpans) {
        for (const span of scope.spans) {
          this.spans.push({
            ...span,
            attributes: attributesOf(span.attributes ?? []),
            serviceName: String(resource['service.name']),
          });
        }
      }
    }
  }
}

function attributesOf(list: OtlpAttribute[]): Record<string, unknown> {
  return Object.fromEntries(list.map(({ key, value }) => [key, Object.values(value)[0]]));
}
