import { ClientError, UNAVAILABLE_ERROR_CODE } from '@parley/realtime';
import { dependencyUnavailable } from '../../errors/unavailable.ts';

/**
 * What a webchat hook's failure becomes on the realtime boundary: a store or broker outage is reply error
 * `{"code":503,"message":"store_unavailable","temporary":true}` (the official client and the SDK retry the command;
 * a retried SendMessage is deduplicated by its client_message_id); anything else is passed on unchanged.
 */
export function forRealtime(error: unknown): unknown {
  const unavailable = dependencyUnavailable(error);
  return unavailable
    ? new ClientError(UNAVAILABLE_ERROR_CODE, unavailable.code, { temporary: true, cause: error })
    : error;
}
