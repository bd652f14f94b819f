/**
 * Where the SDK keeps the visitor's session id and current conversation, so a reload resumes the same
 * conversations. The shape is a subset of the Web Storage API, so `window.localStorage` fits as is.
 */
export interface KeyValueStorage {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

/**
 * A storage that lives as long as the object (Node, tests, or browsers where localStorage is blocked).
 *
 * @example
 * ```ts
 * const chat = await createWebchat({ baseUrl, companyId, storage: memoryStorage() });
 * ```
 */
export function memoryStorage(initial: Record<string, string> = {}): KeyValueStorage {
  const items = new Map(Object.entries(initial));
  return {
    getItem: (key) => items.get(key) ?? null,
    setItem: (key, value) => void items.set(key, String(value)),
    removeItem: (key) => void items.delete(key),
  };
}

/**
 * `localStorage` when the environment has a usable one (browsers; not private modes that throw on write, not
 * sandboxed iframes that throw on access), otherwise memory.
 */
export function defaultStorage(): KeyValueStorage {
  try {
    const candidate = (globalThis as { localStorage?: KeyValueStorage }).localStorage;
    if (candidate) {
      const probe = '__parley_probe__';
      candidate.setItem(probe, '1');
      candidate.removeItem(probe);
      return candidate;
    }
  } catch {
    // Storage access can throw (SecurityError, QuotaExceededError); memory keeps the chat working for this page.
  }
  return memoryStorage();
}

/** Generates a UUID v4 with the platform's CSPRNG (Web Crypto in browsers and Node 20). */
export function randomId(): string {
  return globalThis.crypto.randomUUID();
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The visitor's session: one id per company generated once and persisted, and the conversation last open in
 * each channel (so a widget on one site resumes its own conversation, not another channel's).
 */
export class SessionStore {
  private readonly storage: KeyValueStorage;
  private readonly prefix: string;
  private readonly channelKey: string;

  constructor(storage: KeyValueStorage, companyId: string, channelId: string | undefined) {
    this.storage = storage;
    this.prefix = `parley:${companyId}`;
    this.channelKey = `${this.prefix}:conversation:${channelId ?? 'default'}`;
  }

  /** The persisted session id, created on first use. A corrupted value is replaced rather than sent. */
  sessionId(): string {
    const key = `${this.prefix}:session`;
    const existing = safeGet(this.storage, key);
    if (existing && UUID.test(existing)) return existing;
    const created = randomId();
    safeSet(this.storage, key, created);
    return created;
  }

  /** Replaces the session id with a new one (a visitor who signed out starts over as someone new). */
  resetSessionId(): string {
    const created = randomId();
    safeSet(this.storage, `${this.prefix}:session`, created);
    return created;
  }

  currentConversationId(): string | null {
    const value = safeGet(this.storage, this.channelKey);
    return value && UUID.test(value) ? value : null;
  }

  setCurrentConversationId(id: string | null): void {
    if (id === null) safeRemove(this.storage, this.channelKey);
    else safeSet(this.storage, this.channelKey, id);
  }
}

function safeGet(storage: KeyValueStorage, key: string): string | null {
  try {
    return storage.getItem(key);
  } catch {
    return null;
  }
}

function safeSet(storage: KeyValueStorage, key: string, value: string): void {
  try {
    storage.setItem(key, value);
  } catch {
    // A full or blocked storage only costs resumption after reload; the chat itself keeps working.
  }
}

function safeRemove(storage: KeyValueStorage, key: string): void {
  try {
    storage.removeItem(key);
  } catch {
    // See safeSet.
  }
}
