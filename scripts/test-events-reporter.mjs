// A node:test reporter for scripts/test-runner.mjs: one JSON line per event the runner needs to count results and
// to say which test was running when a file is stopped. `test:dequeue` is when a test starts running and
// `test:complete` when it ends (both in execution order); `test:pass` / `test:fail` come in declaration order and
// carry the verdict.
export default async function* eventsReporter(source) {
  for await (const event of source) {
    const data = event.data ?? {};
    switch (event.type) {
      case 'test:enqueue':
      case 'test:dequeue':
      case 'test:complete':
        yield `${JSON.stringify({ type: event.type, name: data.name, nesting: data.nesting })}\n`;
        break;
      case 'test:pass':
      case 'test:fail':
        yield `${JSON.stringify({
          type: event.type,
          name: data.name,
          nesting: data.nesting,
          suite: data.details?.type === 'suite',
          skip: data.skip !== undefined && data.skip !== false,
          todo: data.todo !== undefined && data.todo !== false,
        })}\n`;
        break;
      default:
        break;
    }
  }
}
