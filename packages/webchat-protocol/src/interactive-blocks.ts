/**
 * Interactive blocks (docs/design.md "Interactive blocks"): a digital employee or an agent offers choices — quick
 * replies, or the buttons of a card — and the visitor answers with a postback naming one. The shapes and their
 * validation live here, once, for the server (bot replies, agent posts, SendMessage), the SDK and the widget.
 */

/** One choice of a {@link QuickRepliesBlock}: `id` is what a postback names, `label` what the visitor sees. */
export interface QuickReplyOption {
  id: string;
  label: string;
}

/** Choices shown as buttons under a message; they disappear once the visitor answered (any later user message). */
export interface QuickRepliesBlock {
  id: string;
  type: 'quick_replies';
  options: QuickReplyOption[];
}

/** A button of a {@link CardBlock}: with a `url` it is a link (opens the page, sends nothing), else a postback. */
export interface CardButton {
  id: string;
  label: string;
  url?: string;
}

/** A card: a title, optional text and image, and buttons. */
export interface CardBlock {
  id: string;
  type: 'card';
  title: string;
  text?: string;
  image_url?: string;
  buttons: CardButton[];
}

/**
 * The visitor's choice: names an option or url-less button of the latest digital-employee or agent message. The
 * server stores the label it offered, whatever label the client sent.
 */
export interface PostbackBlock {
  id: string;
  type: 'postback';
  option_id: string;
  label: string;
}

/** Blocks that offer choices, as a bot or an agent writes them (the server assigns the block ids). */
export type InteractiveBlockInput = Omit<QuickRepliesBlock, 'id'> | Omit<CardBlock, 'id'>;

/** A choice a postback may name: a quick reply option or a card button without `url`. */
export interface OfferedChoice {
  id: string;
  label: string;
}

/** Bounds of interactive blocks: what fits a chat bubble and what no client struggles to lay out. */
export const INTERACTIVE_LIMITS = {
  /** Characters of an option or button id (ids are machine names; a postback echoes them). */
  idLength: 64,
  /** Characters of an option or button label. */
  labelLength: 100,
  /** Options of one quick replies block. */
  options: 10,
  /** Buttons of one card. */
  buttons: 5,
  titleLength: 200,
  textLength: 2000,
  urlLength: 2048,
  /** Interactive blocks of one message. */
  blocks: 5,
} as const;

/** A problem found in blocks: `field` is a path like `blocks[1].options[0].label`, `message` is safe to show. */
export interface BlockProblem {
  field: string;
  message: string;
}

/** What {@link readInteractiveBlocks} made of a list: the blocks (without ids), or the first problem. */
export type InteractiveBlocksReading =
  | { blocks: InteractiveBlockInput[]; problem?: undefined }
  | { blocks?: undefined; problem: BlockProblem };

/** Whether `type` names a block that offers choices (`quick_replies`, `card`). */
export function isInteractiveType(type: unknown): type is InteractiveBlockInput['type'] {
  return type === 'quick_replies' || type === 'card';
}

/**
 * Checks a list of interactive blocks as a bot or an agent sent them (each `{type: "quick_replies" | "card", …}`),
 * `path` naming the list in problems. Rules: known fields only; ids and labels non-empty text within
 * {@link INTERACTIVE_LIMITS}; 1–10 options, 0–5 buttons; `url` and `image_url` absolute `http:`/`https:` URLs;
 * every option and button id unique across the list (a postback must name exactly one choice).
 *
 * @example
 * ```ts
 * readInteractiveBlocks([{ type: 'quick_replies', options: [{ id: 'yes', label: 'Yes' }] }], 'blocks');
 * // { blocks: [{ type: 'quick_replies', options: [{ id: 'yes', label: 'Yes' }] }] }
 * ```
 */
export function readInteractiveBlocks(value: unknown, path: string): InteractiveBlocksReading {
  if (!Array.isArray(value)) return fail(path, 'must be a list of blocks');
  if (value.length > INTERACTIVE_LIMITS.blocks)
    return fail(path, `holds at most ${INTERACTIVE_LIMITS.blocks} interactive blocks`);
  const blocks: InteractiveBlockInput[] = [];
  const ids = new Set<string>();
  for (const [i, item] of value.entries()) {
    const at = `${path}[${i}]`;
    const reading = readOne(item, at);
    if (reading.problem) return reading;
    for (const id of idsOf(reading.block)) {
      if (ids.has(id)) return fail(at, `repeats the id "${id}" (ids are unique within a message)`);
      ids.add(id);
    }
    blocks.push(reading.block);
  }
  return { blocks };
}

/**
 * The choices a message offers for postbacks: its quick reply options and its card buttons without `url` (a url
 * button is a link). Blocks of other types offer nothing.
 */
export function choicesOf(blocks: ReadonlyArray<{ type: string }>): OfferedChoice[] {
  const choices: OfferedChoice[] = [];
  for (const block of blocks) {
    if (block.type === 'quick_replies')
      for (const o of (block as QuickRepliesBlock).options) choices.push({ id: o.id, label: o.label });
    if (block.type === 'card')
      for (const b of (block as CardBlock).buttons)
        if (b.url === undefined) choices.push({ id: b.id, label: b.label });
  }
  return choices;
}

/** Every option and button id of a block, links included. */
function idsOf(block: InteractiveBlockInput): string[] {
  return block.type === 'quick_replies' ? block.options.map((o) => o.id) : block.buttons.map((b) => b.id);
}

type OneReading =
  | { block: InteractiveBlockInput; problem?: undefined }
  | { block?: undefined; problem: BlockProblem };

function readOne(item: unknown, at: string): OneReading {
  if (!isRecord(item)) return fail(at, 'must be an object');
  if (item.type === 'quick_replies') return readQuickReplies(item, at);
  if (item.type === 'card') return readCard(item, at);
  return fail(`${at}.type`, 'must be "quick_replies" or "card"');
}

function readQuickReplies(item: Record<string, unknown>, at: string): OneReading {
  const unknown = unknownField(item, ['type', 'options']);
  if (unknown) return fail(`${at}.${unknown}`, 'is not a field of quick_replies');
  const options = item.options;
  if (!Array.isArray(options) || options.length === 0 || options.length > INTERACTIVE_LIMITS.options)
    return fail(`${at}.options`, `must hold 1–${INTERACTIVE_LIMITS.options} options`);
  const read: QuickReplyOption[] = [];
  for (const [i, option] of options.entries()) {
    const choice = readChoice(option, `${at}.options[${i}]`, false);
    if ('problem' in choice) return choice;
    read.push({ id: choice.id, label: choice.label });
  }
  return { block: { type: 'quick_replies', options: read } };
}

function readCard(item: Record<string, unknown>, at: string): OneReading {
  const unknown = unknownField(item, ['type', 'title', 'text', 'image_url', 'buttons']);
  if (unknown) return fail(`${at}.${unknown}`, 'is not a field of card');
  const title = text(item.title, INTERACTIVE_LIMITS.titleLength);
  if (title === undefined)
    return fail(
      `${at}.title`,
      `must be non-empty text of at most ${INTERACTIVE_LIMITS.titleLength} characters`,
    );
  const card: Omit<CardBlock, 'id'> = { type: 'card', title, buttons: [] };
  if (item.text !== undefined) {
    const body = text(item.text, INTERACTIVE_LIMITS.textLength);
    if (body === undefined)
      return fail(
        `${at}.text`,
        `must be non-empty text of at most ${INTERACTIVE_LIMITS.textLength} characters`,
      );
    card.text = body;
  }
  if (item.image_url !== undefined) {
    if (!isWebUrl(item.image_url)) return fail(`${at}.image_url`, URL_RULE);
    card.image_url = item.image_url;
  }
  const buttons = item.buttons ?? [];
  if (!Array.isArray(buttons) || buttons.length > INTERACTIVE_LIMITS.buttons)
    return fail(`${at}.buttons`, `must hold at most ${INTERACTIVE_LIMITS.buttons} buttons`);
  for (const [i, button] of buttons.entries()) {
    const choice = readChoice(button, `${at}.buttons[${i}]`, true);
    if ('problem' in choice) return choice;
    card.buttons.push(choice);
  }
  return { block: card };
}

function readChoice(
  value: unknown,
  at: string,
  mayLink: boolean,
): CardButton | { problem: BlockProblem; block?: undefined } {
  if (!isRecord(value)) return fail(at, 'must be an object');
  const unknown = unknownField(value, mayLink ? ['id', 'label', 'url'] : ['id', 'label']);
  if (unknown) return fail(`${at}.${unknown}`, 'is not a field here');
  const id = text(value.id, INTERACTIVE_LIMITS.idLength);
  if (id === undefined)
    return fail(`${at}.id`, `must be non-empty text of at most ${INTERACTIVE_LIMITS.idLength} characters`);
  const label = text(value.label, INTERACTIVE_LIMITS.labelLength);
  if (label === undefined)
    return fail(
      `${at}.label`,
      `must be non-empty text of at most ${INTERACTIVE_LIMITS.labelLength} characters`,
    );
  if (value.url === undefined) return { id, label };
  if (!isWebUrl(value.url)) return fail(`${at}.url`, URL_RULE);
  return { id, label, url: value.url };
}

const URL_RULE = `must be an absolute http: or https: URL of at most ${INTERACTIVE_LIMITS.urlLength} characters`;

/** Text that is not blank and at most `max` characters (UTF-16 units, as JSON Schema's maxLength counts). */
function text(value: unknown, max: number): string | undefined {
  return typeof value === 'string' && value.trim().length > 0 && value.length <= max ? value : undefined;
}

/**
 * An absolute `http:` or `https:` URL without credentials: anything else (`javascript:`, `data:`) would run or
 * hide something when a client renders it as a link or an image.
 */
function isWebUrl(value: unknown): value is string {
  if (typeof value !== 'string' || value.length > INTERACTIVE_LIMITS.urlLength) return false;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  return (url.protocol === 'https:' || url.protocol === 'http:') && !url.username && !url.password;
}

function unknownField(item: Record<string, unknown>, known: readonly string[]): string | undefined {
  return Object.keys(item).find((key) => !known.includes(key));
}

function fail(
  field: string,
  message: string,
): { problem: BlockProblem; block?: undefined; blocks?: undefined } {
  return { problem: { field, message: `${field} ${message}` } };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
