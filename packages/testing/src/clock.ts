/**
 * A clock a test moves by hand, for the services that take `clock: () => number` (milliseconds since the epoch, as
 * Date.now): session expiry, rate-limit windows, access-token expiry, and (through TestServerOptions.clock) the
 * scheduled jobs, such as the snooze wake-up. It starts at the real time, so timestamps it produces look ordinary, and
 * never moves by itself.
 */
export class TestClock {
  private ms = Date.now();

  /** Pass this where a service takes a clock. */
  readonly now = (): number => this.ms;

  advance(ms: number): void {
    this.ms += ms;
  }
}
