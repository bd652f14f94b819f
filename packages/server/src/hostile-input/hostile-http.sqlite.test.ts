import { hostileHttpSuite } from '@parley/testing/hostile-input/hostile-http.suite';

hostileHttpSuite('sqlite');
