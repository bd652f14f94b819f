// Compiled by scripts/test-build.test.ts and run as a bundle: prints what a test could tell apart from a run of its
// TypeScript source (its own place, a workspace package, a dependency, class names, source lines of a stack).
import { TestClock } from '@parley/testing/clock';
import pg from 'pg';
import { Sample as OtherSample, otherUrl } from './other-place.fixture.ts';

class Sample {
  readonly where = 'sample';
}

const stackLine = new Error('where am I').stack?.split('\n')[1] ?? '';
console.log(
  JSON.stringify({
    url: import.meta.url,
    dirname: import.meta.dirname,
    filename: import.meta.filename,
    otherUrl,
    spelled: 'import.meta.url',
    names: [Sample.name, OtherSample.name, new Sample().where, new OtherSample().where],
    clock: typeof new TestClock().now,
    pgClient: typeof pg.Client,
    stackLine,
  }),
);
