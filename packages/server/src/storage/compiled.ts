import { type Compilable, CompiledQuery } from 'kysely';

/** Stands for the named argument while the query is compiled once. */
type Arg<A> = <K extends keyof A & string>(name: K) => A[K];

const MARK = '\u0000parley-arg:';

/**
 * A query built and compiled by Kysely once, for this database's dialect, and then only bound to values: for
 * statements on hot paths (every chat message, every streamed reply), where Kysely's builder and compiler cost
 * more than SQLite takes to run the statement. `build` receives `arg(name)`, a placeholder for each value bound
 * later; any other value in the query stays a constant parameter.
 *
 *   const byId = compileOnce<{ id: string }>((arg) => db.selectFrom('messages').selectAll().where('id', '=', arg('id')));
 *   await db.executeQuery(byId({ id }));
 */
export function compileOnce<A extends object>(
  build: (arg: Arg<A>) => Compilable<unknown>,
): (args: A) => CompiledQuery {
  const placeholder = ((name: string) => `${MARK}${name}`) as Arg<A>;
  const { sql, parameters } = build(placeholder).compile();
  // Each parameter is either an argument's placeholder (bound per call) or a constant of the query itself.
  const slots: Array<(args: A) => unknown> = parameters.map((value) => {
    if (typeof value !== 'string' || !value.startsWith(MARK)) return () => value;
    const name = value.slice(MARK.length) as keyof A;
    return (args) => args[name];
  });
  return (args) =>
    CompiledQuery.raw(
      sql,
      slots.map((slot) => slot(args)),
    );
}
