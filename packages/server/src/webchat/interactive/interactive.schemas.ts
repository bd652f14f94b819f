import { INTERACTIVE_LIMITS } from '@parley/webchat-protocol';
import { Type } from '@sinclair/typebox';

/**
 * JSON Schemas of the blocks an agent posts (platform API, OpenAPI), mirroring the protocol's rules
 * (@parley/webchat-protocol interactive-blocks.ts). Rules a schema cannot say — ids unique within a message, a URL
 * that really parses — are checked by ConversationCommands with the protocol's `readInteractiveBlocks`.
 */
const bounded = (maxLength: number) => Type.String({ minLength: 1, maxLength });
const WebUrl = Type.String({
  maxLength: INTERACTIVE_LIMITS.urlLength,
  pattern: '^[Hh][Tt][Tt][Pp][Ss]?://',
  description: 'An absolute http: or https: URL.',
});

export const MarkdownBlockInput = Type.Object(
  { type: Type.Literal('markdown'), content: Type.String({ minLength: 1 }) },
  { additionalProperties: false },
);

export const QuickRepliesBlockInput = Type.Object(
  {
    type: Type.Literal('quick_replies'),
    options: Type.Array(
      Type.Object(
        { id: bounded(INTERACTIVE_LIMITS.idLength), label: bounded(INTERACTIVE_LIMITS.labelLength) },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: INTERACTIVE_LIMITS.options },
    ),
  },
  {
    additionalProperties: false,
    description: 'Choices shown as buttons; the visitor answers with a postback.',
  },
);

export const CardBlockInput = Type.Object(
  {
    type: Type.Literal('card'),
    title: bounded(INTERACTIVE_LIMITS.titleLength),
    text: Type.Optional(bounded(INTERACTIVE_LIMITS.textLength)),
    image_url: Type.Optional(WebUrl),
    buttons: Type.Array(
      Type.Object(
        {
          id: bounded(INTERACTIVE_LIMITS.idLength),
          label: bounded(INTERACTIVE_LIMITS.labelLength),
          url: Type.Optional(WebUrl),
        },
        { additionalProperties: false },
      ),
      { maxItems: INTERACTIVE_LIMITS.buttons },
    ),
  },
  {
    additionalProperties: false,
    description: 'A card; a button with `url` is a link, one without a postback.',
  },
);
