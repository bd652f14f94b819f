// A second module declaring a class of the same name as sample.fixture.ts's: a bundle must rename one of them, and the
// compiled test run keeps both classes' own names (scripts/test-build.test.ts).
export class Sample {
  readonly where = 'other-place';
}
export const otherUrl = import.meta.url;
