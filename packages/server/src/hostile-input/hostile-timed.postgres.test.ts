import { hostileTimedSuite } from '@parley/testing/hostile-input/hostile-timed.suite';

hostileTimedSuite('postgres');
