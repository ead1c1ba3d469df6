// The MCP transport of POST /mcp: stateless Streamable HTTP with JSON answers
// (no SSE stream, no Mcp-Session-Id), as the SDK's web-standard transport
// does it with `sessionIdGenerator: undefined, enableJsonResponse: true`, for
// one SDK Server the whole app shares. The SDK's transport serves one request
// per server and transport, made and closed for each request, with a web
// Request and Response around it: that took about 0.3 ms a request, as long as
// a small search. Each request's messages get ids of their own inside (two
// clients may both send id 1), and the answers go back under the client's ids.
import { JSONRPCMessageSchema, SUPPORTED_PROTOCOL_VERSIONS, type JSONRPCMessage, type RequestId } from '@modelcontextprotocol/sdk/types.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';

/** At most this many messages in one batch (the SDK's transport's bound). */
const MAX_BATCH = 100;

/** What POST /mcp answers: a status, and a JSON body or none (202). */
export interface TransportAnswer {
  status: number;
  body?: unknown;
}

/** The JSON-RPC error body of a request refused as a whole (the SDK transport's words and codes). */
const refused = (status: number, code: number, message: string): TransportAnswer => ({
  status,
  body: { jsonrpc: '2.0', error: { code, message }, id: null },
});

const isRequest = (message: JSONRPCMessage): message is JSONRPCMessage & { id: RequestId; method: string } => 'method' in message && 'id' in message;

/** A request's schema, as the SDK's (zod) ones answer safeParse. */
interface RequestCheck {
  safeParse(value: unknown): { success: boolean; error?: { issues: { path: PropertyKey[]; message: string }[] } };
}

export class RequestTransport<C> implements Transport {
  /**
   * `checks`: the schema of each method the server handles. The SDK's Protocol parses a request
   * before its handler and answers a mismatch as -32603 Internal error; checked here first, it is
   * -32602 Invalid params, naming the field.
   */
  constructor(private readonly checks: Record<string, RequestCheck> = {}) {}

  onmessage?: Transport['onmessage'];
  onclose?: () => void;
  onerror?: (error: Error) => void;
  private nextId = 0;
  /** Requests in flight by their inner id: how to answer, and the context their handler runs in. */
  private readonly pending = new Map<number, { answer: (message: JSONRPCMessage) => void; context: C }>();

  async start(): Promise<void> {}

  async close(): Promise<void> {
    this.onclose?.();
  }

  /** The context of the request a handler serves (RequestHandlerExtra.requestId is the inner id). */
  contextOf(requestId: RequestId): C {
    const found = this.pending.get(requestId as number);
    if (!found) throw new Error(`no request ${String(requestId)} in flight`);
    return found.context;
  }

  /** Why a request's params do not fit its method's schema, or undefined. */
  private invalidParams(message: JSONRPCMessage & { method: string }): string | undefined {
    const check = Object.hasOwn(this.checks, message.method) ? this.checks[message.method] : undefined;
    const issue = check?.safeParse(message).error?.issues[0];
    return issue && `Invalid params: ${issue.path.map(String).join('.')}: ${issue.message}`;
  }

  async send(message: JSONRPCMessage): Promise<void> {
    // Only answers go out: this server sends no request and no notification of its own.
    if (!('id' in message) || 'method' in message) return;
    this.pending.get(message.id as number)?.answer(message);
  }

  /** One POST's body (a message or a batch) and headers: its answers, under the client's ids. */
  async handle(body: unknown, accept: string, protocolVersion: string | undefined, context: C): Promise<TransportAnswer> {
    if (!accept.includes('application/json') || !accept.includes('text/event-stream')) {
      return refused(406, -32000, 'Not Acceptable: Client must accept both application/json and text/event-stream');
    }
    if (protocolVersion !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(protocolVersion)) {
      return refused(
        400,
        -32000,
        `Bad Request: Unsupported protocol version: ${protocolVersion} (supported versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`,
      );
    }
    const batch = Array.isArray(body);
    const given = batch ? body : [body];
    if (given.length > MAX_BATCH) return refused(400, -32600, `Invalid Request: Batch must not exceed ${MAX_BATCH} messages`);
    const messages: JSONRPCMessage[] = [];
    for (const item of given) {
      const parsed = JSONRPCMessageSchema.safeParse(item);
      if (!parsed.success) return refused(400, -32700, 'Parse error: Invalid JSON-RPC message');
      messages.push(parsed.data);
    }
    const answers = messages.map((message) => (isRequest(message) ? this.request(message, context) : this.deliver(message)));
    const replies = (await Promise.all(answers)).filter((reply) => reply !== undefined);
    if (replies.length === 0) return { status: 202 };
    return { status: 200, body: batch ? replies : replies[0] };
  }

  /** A notification or a response: delivered, nothing to answer. */
  private deliver(message: JSONRPCMessage): undefined {
    this.onmessage?.(message);
    return undefined;
  }

  /** A request under an inner id; its answer under the client's. */
  private request(message: JSONRPCMessage & { id: RequestId; method: string }, context: C): Promise<JSONRPCMessage> {
    const invalid = this.invalidParams(message);
    if (invalid !== undefined) return Promise.resolve({ jsonrpc: '2.0', id: message.id, error: { code: -32602, message: invalid } });
    const inner = ++this.nextId;
    return new Promise<JSONRPCMessage>((resolve) => {
      this.pending.set(inner, {
        context,
        answer: (reply) => {
          this.pending.delete(inner);
          resolve({ ...reply, id: message.id } as JSONRPCMessage);
        },
      });
      this.onmessage?.({ ...message, id: inner });
    });
  }
}
