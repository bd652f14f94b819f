// A visitor using the project's own SDK (`@parley/webchat-sdk`) in Node, as its README shows: it sets itself up,
// retries sends with the same client_message_id, reconnects and reconciles over REST by itself. The suite only
// calls `send` and reads `messages` at the end.
import { type ChatMessage, createWebchat, memoryStorage, type Webchat } from '@parley/webchat-sdk';
import WebSocket from 'ws';
import { contentOf, ShownTexts } from './client-view.ts';
import {
  type SendRecord,
  SendsInFlight,
  type ShownMessage,
  type Visitor,
  type VisitorRecord,
} from './visitor.ts';

export class SdkVisitor implements Visitor {
  readonly kind = 'sdk' as const;
  private chat: Webchat | null = null;
  private readonly sends: SendRecord[] = [];
  private readonly inFlight = new SendsInFlight();
  /** Final texts per message key, from `message:completed` (the SDK promises one per message). */
  private readonly completions = new Map<string, Set<string>>();
  /** Every text shown for each message before it completed (see ShownTexts). */
  private readonly shownTexts = new ShownTexts();
  private recoveryFailures = 0;

  constructor(
    readonly label: string,
    private readonly baseUrl: string,
    private readonly companyId: string,
  ) {}

  get inFlightCount(): number {
    return this.inFlight.size;
  }

  async start(timeoutMs = 30_000): Promise<void> {
    const chat = await createWebchat({
      baseUrl: this.baseUrl,
      companyId: this.companyId,
      storage: memoryStorage(),
      websocket: WebSocket,
      startTimeoutMs: timeoutMs,
      // Same cap as the centrifuge visitors (the client default grows to 20 s).
      centrifuge: { minReconnectDelay: 200, maxReconnectDelay: 5_000 },
    });
    const showing = (message: ChatMessage) => {
      if (message.id && message.status !== 'complete')
        this.shownTexts.note(message.id, contentOf({ blocks: message.blocks as never }).text);
    };
    chat.on('message:added', showing);
    chat.on('message:updated', showing);
    chat.on('message:completed', (message) => {
      const texts = this.completions.get(message.key) ?? new Set<string>();
      texts.add(`${message.text}\u0000${message.error?.code ?? ''}`);
      this.completions.set(message.key, texts);
    });
    chat.on('reconciled', () => {
      this.recoveryFailures++;
    });
    this.chat = chat;
  }

  send(content: string): Promise<void> {
    const chat = this.chat!;
    const record: SendRecord = { clientMessageId: '', content, sentAt: Date.now(), attempts: 1 };
    this.sends.push(record);
    const sending = chat.send(content);
    // The SDK adds the pending message synchronously; its key is the client_message_id it publishes with.
    record.clientMessageId = chat.messages.find((m) => m.text === content && m.role === 'user')?.key ?? '';
    const done = sending.then(
      (message) => {
        record.clientMessageId = message.clientMessageId ?? record.clientMessageId;
        record.ackedAt = Date.now();
      },
      (err: Error) => {
        record.gaveUp = err.message;
      },
    );
    return this.inFlight.track(done);
  }

  settle(timeoutMs: number): Promise<void> {
    return this.inFlight.settle(timeoutMs, `${this.label} sends`);
  }

  close(): void {
    this.chat?.close();
  }

  record(): VisitorRecord {
    const chat = this.chat!;
    return {
      label: this.label,
      kind: this.kind,
      conversationId: chat.conversation!.id,
      sends: this.sends,
      view: chat.messages
        .filter((m) => m.id)
        .map((m) => ({
          ...shown(m),
          takenBack: m.status === 'complete' && this.shownTexts.takenBack(m.id!, shown(m).text),
        })),
      conflictingCompletes: [...this.completions.entries()].filter(([, t]) => t.size > 1).map(([key]) => key),
      recoveryFailures: this.recoveryFailures,
    };
  }
}

function shown(message: ChatMessage): ShownMessage {
  return {
    id: message.id!,
    role: message.role,
    status: message.status,
    clientMessageId: message.clientMessageId ?? null,
    ...contentOf({ blocks: message.blocks as never }),
  };
}
