/**
 * Where a V8 CPU profile's time went: self time by function and by package or Parley folder, as shares of the
 * profiled thread's time (idle excluded), so figures from a loaded machine compare with an idle one's.
 */
import { Session } from 'node:inspector/promises';

export interface CpuProfile {
  nodes: Array<{
    id: number;
    callFrame: { functionName: string; url: string; lineNumber: number };
    children?: number[];
  }>;
  samples: number[];
  timeDeltas: number[];
}

/** Starts the V8 profiler on this thread; `stop` returns the profile of the time since. */
export async function startCpuProfile(): Promise<{ stop: () => Promise<CpuProfile> }> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  // 250 µs between samples: a burst's per-message work is well under a millisecond.
  await session.post('Profiler.setSamplingInterval', { interval: 250 });
  await session.post('Profiler.start');
  return {
    stop: async () => {
      const { profile } = await session.post('Profiler.stop');
      session.disconnect();
      return profile as unknown as CpuProfile;
    },
  };
}

/** Where a frame's code lives: an npm package, a Parley package's folder (`server/webchat/realtime`), or Node. */
function placeOf(url: string): string {
  const pkg = /node_modules\/((@[^/]+\/)?[^/]+)/.exec(url)?.[1];
  if (pkg) return pkg;
  const parley = /packages\/([^/]+)\/src\/((?:[^/]+\/)*)/.exec(url);
  if (parley) return `parley:${parley[1]}/${(parley[2] ?? '').replace(/\/$/, '')}`.replace(/\/$/, '');
  if (url.startsWith('node:')) return url;
  return url === '' ? '(native, gc)' : 'other';
}

/** The profile's self time by function and by place, as text: the top `n` of each, idle time left out
 * (`(program)` is native work V8 cannot attribute to a function: socket writes, libuv). */
export function summariseCpuProfile(profile: CpuProfile, n = 40): string {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const byFunction = new Map<string, number>();
  const byPlace = new Map<string, number>();
  let total = 0;
  let idle = 0;
  for (const [i, id] of profile.samples.entries()) {
    const us = profile.timeDeltas[i] ?? 0;
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    if (functionName === '(idle)') {
      idle += us;
      continue;
    }
    total += us;
    const short = url.replace(/^.*\/(node_modules\/(@[^/]+\/)?[^/]+|packages\/[^/]+)\//, '');
    const key = `${functionName || '(anonymous)'} ${short}:${lineNumber + 1}`;
    byFunction.set(key, (byFunction.get(key) ?? 0) + us);
    const place = url === '' && functionName.startsWith('(') ? functionName : placeOf(url);
    byPlace.set(place, (byPlace.get(place) ?? 0) + us);
  }
  const top = (m: Map<string, number>) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, v]) => `${((100 * v) / total).toFixed(1).padStart(5)} %  ${k}`)
      .join('\n');
  return `busy ${(total / 1000).toFixed(0)} ms, idle ${(idle / 1000).toFixed(0)} ms\n\nby place:\n${top(byPlace)}\n\nby function (self):\n${top(byFunction)}`;
}
