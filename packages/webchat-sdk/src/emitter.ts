/** A minimal typed event emitter that works the same in browsers and Node (no `node:events`). */
// biome-ignore lint/suspicious/noExplicitAny: listener signatures are declared per event by the map.
export class Emitter<Events extends { [K in keyof Events]: (...args: any[]) => void }> {
  private readonly listeners = new Map<keyof Events, Set<Events[keyof Events]>>();

  /** Adds a listener; returns a function that removes it. */
  on<E extends keyof Events>(event: E, listener: Events[E]): () => void {
    let set = this.listeners.get(event);
    if (!set) {
      set = new Set();
      this.listeners.set(event, set);
    }
    set.add(listener);
    return () => this.off(event, listener);
  }

  off<E extends keyof Events>(event: E, listener: Events[E]): void {
    this.listeners.get(event)?.delete(listener);
  }

  protected emit<E extends keyof Events>(event: E, ...args: Parameters<Events[E]>): void {
    for (const listener of [...(this.listeners.get(event) ?? [])]) {
      try {
        (listener as (...a: Parameters<Events[E]>) => void)(...args);
      } catch (err) {
        // One faulty integrator callback must not break message delivery to the others.
        console.error('parley webchat: an event listener threw', err);
      }
    }
  }
}
