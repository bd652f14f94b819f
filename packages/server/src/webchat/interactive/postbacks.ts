import { randomUUID } from 'node:crypto';
import { choicesOf } from '@parley/webchat-protocol';
import type { Block, MessageSnapshot, SendMessage } from '../messages/message.ts';
import { PUBLISH_CODES, PublishRefusal } from '../messages/send-message.ts';

/** Where the offer a postback answers comes from: the conversation's newest digital-employee or agent message. */
export interface OfferSource {
  latestOffer(conversationId: string): Promise<MessageSnapshot | undefined>;
}

/**
 * The blocks a visitor's SendMessage is stored with, ids assigned. A postback (docs/design.md "Interactive
 * blocks") must name a choice of the conversation's latest digital-employee or agent message — a quick reply
 * option or a card button without `url` — and is stored with the label that message offered, never the client's.
 * Anything else (an unknown id, a choice of an older message, a link button) is refused with publish error 400
 * `postback_not_offered`.
 */
export async function storedUserBlocks(
  offers: OfferSource,
  conversationId: string,
  send: SendMessage,
): Promise<Block[]> {
  const blocks: Block[] = [];
  for (const block of send.blocks) {
    if (block.type === 'markdown') {
      blocks.push({ id: randomUUID(), type: 'markdown', content: block.content });
      continue;
    }
    // Messages with attachments are resolved by attachments.service.ts `blocksOf` (publish-hook.ts), never here.
    if (block.type === 'attachment') throw new Error('attachment blocks are resolved before the engine');
    const offer = await offers.latestOffer(conversationId);
    const choice = offer && choicesOf(offer.blocks).find((c) => c.id === block.option_id);
    if (!choice) throw notOffered(block.option_id);
    blocks.push({ id: randomUUID(), type: 'postback', option_id: choice.id, label: choice.label });
  }
  return blocks;
}

const notOffered = (optionId: string) =>
  new PublishRefusal(
    PUBLISH_CODES.postbackNotOffered,
    `postback_not_offered: the latest digital-employee or agent message offers no choice "${optionId}"`,
  );
