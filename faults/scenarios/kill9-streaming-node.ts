// `kill -9` of the node that is streaming a reply. A visitor asks for the digital employee's long story (≈ 7 s of
// streaming); once words are arriving, the node its WebSocket (and so the reply) is on is killed. Another node must
// finish or answer that conversation within 15 s, and the interrupted message must end with a `complete` whose
// sequence is above every one already published, so the visitor's client accepts it, and its text must begin with
// every text a client was shown of it (DESIGN "Hostile input and faults": 0 words taken back, also after a dead
// node). The killed node is started again later and must stay up.

import { setTimeout as sleep } from 'node:timers/promises';
import type { CentrifugeVisitor } from '../lib/centrifuge-visitor.ts';
import { runScenario } from '../lib/scenario.ts';
import { STORY_WORDS } from '../lib/seed.ts';

const storyOf = (visitor: CentrifugeVisitor) =>
  [...visitor.view.messages.values()].find((m) => m.role === 'digital_employee');

await runScenario({
  name: 'kill9-streaming-node',
  async fault(ctx) {
    const streamer = await ctx.addCentrifugeVisitor('streamer');
    void streamer.send('tell me a story');
    const streaming = await streamer.view.holdsWithin((v) => {
      const story = [...v.messages.values()].find((m) => m.role === 'digital_employee');
      return story?.status === 'partial' && story.text.split(' ').length >= 10;
    }, 20_000);
    if (!streaming) throw new Error('the story reply did not start streaming within 20 s');
    const index =
      streamer.localPort === undefined ? undefined : ctx.cluster.balancer.backendOf(streamer.localPort);
    if (index === undefined) throw new Error("could not tell which node the streamer's WebSocket is on");
    const node = ctx.cluster.nodes[index]!;
    ctx.goal((f) =>
      f.takenBack > 0 ? `${f.takenBack} message(s) took back words their client had been shown` : undefined,
    );
    const before = storyOf(streamer)!;
    const t0 = Date.now();
    await node.kill9();
    ctx.log(
      `killed ${node.name} (-9) while it streamed word ${before.text.split(' ').length} of ${STORY_WORDS} (sequence ${before.sequence})`,
    );
    await ctx.measureAnswersAgain(t0, streamer);
    await sleep(Math.max(0, t0 + 10_000 - Date.now()));
    await node.start();
    ctx.log(`${node.name} started again`);
    ctx.note(() => {
      const story = storyOf(streamer)!;
      return (
        `the interrupted reply as the streamer shows it at the end: ${story.status}, sequence ${story.sequence}, ` +
        `${story.text.split(' ').length} words${story.errorCodes.length ? `, error ${story.errorCodes.join(',')}` : ''}`
      );
    });
  },
});
