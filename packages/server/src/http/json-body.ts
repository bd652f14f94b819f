import { exceedsJsonDepth } from '@parley/realtime';
import { parseBodyText } from './body-text.ts';
import { jsonTooDeep } from './problem.ts';
import type { App } from './types.ts';

/**
 * The JSON body parser of every route in `scope` (the whole app, and scopes that accept empty bodies): Fastify's
 * own (prototype poisoning refused), behind a nesting check on the text. A body nesting arrays and objects deeper
 * than 64 levels is refused as `validation_failed` before it is parsed (docs/design.md "JSON nesting"), so no walk
 * over it — the edge's text rule, a schema, a serialiser — can overflow the stack, on any route, unknown ones
 * included.
 */
export function useJsonBodyParser(scope: App, options: { allowEmpty?: boolean } = {}): void {
  const parse = scope.getDefaultJsonParser('error', 'error');
  scope.removeContentTypeParser('application/json');
  // The text is read onto V8's heap as it arrives (http/body-text.ts), not kept as the socket's chunks.
  scope.addContentTypeParser(
    'application/json',
    parseBodyText((request, text, done) => {
      if (options.allowEmpty && text === '') return done(null, undefined);
      if (exceedsJsonDepth(text)) return done(jsonTooDeep('body', '(body)'), undefined);
      parse(request, text, done);
    }),
  );
}
