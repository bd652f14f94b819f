// Filler for the latency figures: an endless, deterministic stream of articles (coffee lot pages and harvest reports
// from a seeded PRNG), added to the help centre until a peer holds 10,000 passages, so that search is timed over an
// index of realistic size. Their words come from large pools and made-up names (thousands of distinct rare terms, as
// real catalogues have), but they stay clear of what the questions ask about: no word of the reserved list below and
// no word of any out-of-scope question (scale.test.ts checks both), so the filler never answers a question and never
// gives an out-of-scope one something to match. Recall measured with the filler in place shows what a larger index
// does to the ranking; the answers stay where they were.
import type { Article } from './data.ts';

/** mulberry32: a tiny seeded PRNG (32-bit state), uniform in [0, 1). Same seed, same stream, on every machine. */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** The items of a comma-separated list. */
const list = (items: string): readonly string[] => items.split(/,\s*/);

/**
 * Word beginnings the filler never uses: the help centre's own subjects (orders, shipping, returns, payment,
 * accounts, equipment, the subscription, the API, the shop and café) and the words of the question set's answers.
 */
export const RESERVED_PREFIXES = list(
  'account, api, apple, aria, australia, amsterdam, affiliat, bag, barista, bean, box, brew, brake, ' +
    'bye, cafe, cancel, capital, capsule, certif, chaff, chat, cheap, chocolat, club, code, contact, ' +
    'cookie, countr, cup, custom, dark, day, decaf, deliver, descal, discount, dough, dut, email, error, ' +
    'espresso, euro, farm, filter, franchis, freez, fresh, friday, fridge, fruit, gift, good, gram, ' +
    'great, grind, ground, guarante, hello, help, heron, hiring, hour, invoice, kettle, key, kilo, ' +
    'klarna, light, limit, list, locker, logo, machine, match, milk, mill, minute, mobile, monday, month, ' +
    'morning, nespresso, newsletter, night, nut, open, order, organic, origin, packag, paid, parcel, ' +
    'password, pay, people, person, phish, phone, pickup, pizza, plant, poem, point, press, price, print, ' +
    'privacy, python, real, recip, recycl, refund, refurbish, repair, return, reverse, roast, sale, ' +
    'saturday, season, ship, shop, sign, spanish, stock, store, student, subscri, sunday, support, ' +
    'sustainab, talk, tast, tax, team, thank, thursday, tower, track, translat, trip, tuesday, vat, ' +
    'visit, warrant, water, weather, webhook, wedding, wednesday, week, wholesale, wifi, work, world, ' +
    'year',
);
/** Whole words the filler never uses (too short to reserve as beginnings). */
export const RESERVED_WORDS = list('app, car, cat, cats, cost, costs, dog, hi, lol, ok, tea, hand, second');

const SYLLABLES = list(
  'ba, be, bo, da, de, di, ga, go, ja, ka, ke, ki, ko, la, le, li, lo, ma, me, mi, mo, na, ne, ni, no, ' +
    'ra, re, ri, ro, sa, se, si, so, ta, te, ti, to, va, vi, ya, yo, za, zu, ru, nu, mu, lu, gu, bu, tu, ' +
    'qui, cha, che, chu, hua, xe',
);
const GROWING_REGIONS = list(
  'Ethiopia, Kenya, Colombia, Peru, Guatemala, Brazil, Honduras, Rwanda, Burundi, Costa Rica, ' +
    'El Salvador, Panama, Bolivia, Ecuador, Mexico, Nicaragua, Tanzania, Uganda, Yemen, Sumatra, ' +
    'Papua New Guinea, Yunnan, Malawi, Zambia, Timor-Leste, Jamaica, Haiti, Dominican Republic',
);
const VARIETIES = list(
  'Bourbon, Typica, Caturra, Catuai, Gesha, SL28, SL34, Ruiru 11, Batian, Pacamara, Maragogype, ' +
    'Castillo, Pink Bourbon, Sidra, Wush Wush, Mundo Novo, Yellow Bourbon, Catimor, Sarchimor, Parainema, ' +
    'Red Bourbon, Java, Laurina, Villa Sarchi, Kent, Obata, Marsellesa, Tabi, Chiroso, Mokka, Kurume, ' +
    'Dega, Wolisho, Ombligon, Lempira, Anacafe 14, Centroamericano',
);
const PROCESSES = list(
  'washed, natural, honey, anaerobic natural, carbonic maceration, wet-hulled, pulped natural, ' +
    'red honey, yellow honey, double fermented, semi-washed, extended fermentation',
);
const NOTES = list(
  'blackcurrant, bergamot, jasmine, panela, molasses, apricot, peach, nectarine, lime, grapefruit, ' +
    'pear, plum, cherry, raspberry, blueberry, strawberry, mandarin, hibiscus, rose, lemongrass, toffee, ' +
    'caramel, cocoa, hazelnut, almond, brown sugar, maple syrup, honeydew, cantaloupe, lychee, guava, ' +
    'papaya, tamarind, cinnamon, clove, cardamom, vanilla, marzipan, nougat, fig, date, raisin, ' +
    'cranberry, pomegranate, kiwi, melon, quince, rhubarb, elderflower, orange blossom, lavender, sage, ' +
    'thyme, tobacco, cedar, walnut, pecan, butterscotch, fudge, treacle, praline, lemon curd, ' +
    'blood orange, kumquat, yuzu, tangerine, white grape, red grape, gooseberry, redcurrant, mulberry, ' +
    'blackberry, sour cherry, baked pear, stewed plum, dried apricot, golden raisin, candied orange, ' +
    'cacao, muscovado, white pepper, star anise, bay leaf, mango, pineapple, passionflower, acerola, ' +
    'sultana, persimmon, loquat, pink pepper',
);
const TEXTURES = list(
  'silky, syrupy, creamy, juicy, round, delicate, dense, velvety, crisp, buttery, sparkling, ' +
    'structured, plush, lively, satiny, weighty, supple, brisk',
);
const FINISHES = list('long, clean, lingering, sweet, dry, bright, resonant, short, honeyed, spicy');
const ACIDITY = list('tartaric, malic, citric, winey, soft, vivid, gentle, sparkling, focused');
const SOILS = list(
  'volcanic loam, red clay, sandy loam, granite, basalt, rich humus, limestone, alluvial silt',
);
const SHADE = list('inga, banana, grevillea, avocado, macadamia, cedar, guava, cordia, erythrina');
const MONTHS = list(
  'January, February, March, April, May, June, July, August, September, October, November, December',
);
const DIRECTIONS = list('north, south, east, west, north-east, north-west, south-east, south-west');
const TANKS = list('concrete, tiled, stainless steel, plastic, wooden');
const DRYING = list('raised beds, patios, solar dryers, parabolic dryers, tarpaulins');
const FERMENTATION = list(
  'briefly, slowly, in two stages, under shade, with a starter culture, in cool tanks',
);

/** A seeded source of picks and made-up names. */
class Draw {
  constructor(private readonly random: () => number) {}
  int(low: number, high: number): number {
    return low + Math.floor(this.random() * (high - low + 1));
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.random() * items.length)]!;
  }
  /** `count` distinct picks. */
  some<T>(items: readonly T[], count: number): T[] {
    const chosen = new Set<T>();
    while (chosen.size < Math.min(count, items.length)) chosen.add(this.pick(items));
    return [...chosen];
  }
  /**
   * A made-up proper name of 2 to 4 syllables and at least 5 letters (shorter ones are too often English words),
   * never starting like a reserved word: e.g. "Kelamo".
   */
  name(): string {
    for (;;) {
      const word = Array.from({ length: this.int(2, 4) }, () => this.pick(SYLLABLES)).join('');
      if (word.length >= 5 && !isReserved(word)) return word[0]!.toUpperCase() + word.slice(1);
    }
  }
}

/** True for a word the filler must not use (RESERVED_PREFIXES, RESERVED_WORDS). */
export function isReserved(word: string): boolean {
  const lower = word.toLowerCase();
  return RESERVED_WORDS.includes(lower) || RESERVED_PREFIXES.some((prefix) => lower.startsWith(prefix));
}

const upper = (text: string) => text[0]!.toUpperCase() + text.slice(1);

/** One coffee lot's page: an introduction and six sections. */
function lotPage(draw: Draw, n: number): Article {
  const growing = draw.pick(GROWING_REGIONS);
  const area = draw.name();
  const estate = `${draw.pick(['Finca', 'Hacienda', 'Sitio', 'Estate', 'Station', 'Kebele'])} ${draw.name()}`;
  const producer = `${draw.name()} ${draw.name()}`;
  const variety = draw.pick(VARIETIES);
  const process = draw.pick(PROCESSES);
  const notes = draw.some(NOTES, 4);
  const [low, high] = [draw.int(24, 40) * 50, draw.int(41, 46) * 50];
  const sacks = draw.int(30, 160);
  const harvest = draw.pick(MONTHS);
  const title = `${estate} ${variety}, ${area} (${growing})`;
  const content = [
    `# ${title}`,
    `A ${process} lot of ${variety} from ${estate} in ${area}, ${growing}. ${producer} set aside ${sacks} sacks ` +
      `for us from the ${harvest} picking, after we had evaluated samples of ${draw.int(3, 9)} separate lots.`,
    '## Profile',
    `${upper(notes[0]!)}, ${notes[1]} and ${notes[2]}, with a ${draw.pick(TEXTURES)} body and a ` +
      `${draw.pick(FINISHES)} finish. As it cools, ${notes[3]} comes forward and the acidity turns ` +
      `${draw.pick(ACIDITY)}. ${upper(draw.pick(TEXTURES))} and ${draw.pick(TEXTURES)} in the middle, ` +
      `${draw.pick(FINISHES)} at the end.`,
    '## The producer',
    `${producer} grows ${variety} and ${draw.pick(VARIETIES)} on ${draw.int(24, 90)} hectares at ${estate}, under ` +
      `${draw.pick(SHADE)} and ${draw.pick(SHADE)} shade. ${draw.int(30, 120)} pickers come in for the ` +
      `main crop, and the ripest cherries are picked in ${draw.int(3, 6)} passes over the trees.`,
    '## Area and altitude',
    `${area} lies ${draw.pick(DIRECTIONS)} of ${draw.name()}, at ${low} to ${high} metres above sea level. The ` +
      `soils are ${draw.pick(SOILS)}, rain falls mostly from ${draw.pick(MONTHS)} to ${draw.pick(MONTHS)}, and cool ` +
      `evenings slow the ripening of the cherries, which builds sugar and acidity.`,
    '## Processing',
    `Cherries are sorted on tables, ${process === 'natural' ? 'dried whole' : 'pulped at dusk'} and fermented ` +
      `${draw.pick(FERMENTATION)} in ${draw.pick(TANKS)} tanks, then dried on ` +
      `${draw.pick(DRYING)} until the moisture content reaches ${draw.int(10, 11)}.${draw.int(0, 9)} percent.`,
    '## Lot details',
    [
      `- Producer: ${producer}`,
      `- Area: ${area}, ${growing}`,
      `- Altitude: ${low}–${high} m`,
      `- Variety: ${variety}`,
      `- Process: ${process}`,
      `- Picked: ${harvest}`,
      `- Sacks: ${sacks}`,
      `- Evaluation: ${draw.int(84, 89)}.${draw.pick(['25', '5', '75'])}`,
    ].join('\n'),
    '## From the sourcing desk',
    `We first met ${producer} through ${draw.name()}, who exports for ${draw.int(24, 80)} smallholders around ` +
      `${area}. This is the ${draw.pick(['third', 'fourth', 'fifth', 'sixth', 'seventh'])} lot we have bought ` +
      `from ${estate}; the ${draw.pick(NOTES)} we found in the first samples is still there, with more ` +
      `${draw.pick(NOTES)} than before.`,
  ].join('\n\n');
  const id = `gen-lot-${String(n).padStart(5, '0')}`;
  return {
    id,
    title,
    contentType: 'text/markdown',
    url: `https://help.fernhill.example/lots/${id}`,
    content,
  };
}

/** A harvest report from one growing area: an introduction and five sections. */
function harvestReport(draw: Draw, n: number): Article {
  const growing = draw.pick(GROWING_REGIONS);
  const area = draw.name();
  const station = `${draw.name()} washing station`;
  const title = `Harvest report: ${area}, ${growing}`;
  const content = [
    `# ${title}`,
    `Notes from ${draw.name()} ${draw.name()}, who spent the picking in ${area} with ${draw.int(24, 60)} ` +
      `producers who carry cherries to ${station}.`,
    '## Flowering and rain',
    `Flowering came ${draw.pick(['early', 'late', 'on time', 'in two waves'])}, in ${draw.pick(MONTHS)}, and rain ` +
      `was ${draw.pick(['generous', 'scarce', 'irregular', 'steady'])} through the growing period. On the ` +
      `${draw.pick(SOILS)} slopes above ${draw.name()} the trees carried more cherries than on the ` +
      `${draw.pick(DIRECTIONS)} side of the valley.`,
    '## Picking',
    `Picking started in ${draw.pick(MONTHS)} and ran until ${draw.pick(MONTHS)}. ${station} received ` +
      `${draw.int(120, 900)} tonnes of cherries, ${draw.int(24, 40)} percent more than the crop before, and added ` +
      `premiums for selective picking of ripe cherries only.`,
    '## At the washing station',
    `The ${draw.pick(PROCESSES)} lots were the cleanest, with ${draw.pick(NOTES)} and ${draw.pick(NOTES)} on ` +
      `the table. Fermentation ran ${draw.pick(FERMENTATION)} in ${draw.pick(TANKS)} tanks; drying on ` +
      `${draw.pick(DRYING)} was slowed by cloud cover late in the picking.`,
    '## Logistics',
    `Containers leave from ${draw.name()} port in ${draw.pick(MONTHS)}, and the green lots travel in ` +
      `hermetic liners inside jute sacks to keep its moisture steady on the crossing.`,
    '## Outlook',
    `${draw.name()} expects the ${draw.pick(VARIETIES)} plots ` +
      `${draw.pick(['on the new terraces', 'renewed after the rust outbreak', 'grafted last'])} to come into full ` +
      `production, and the cooperative means to build ` +
      `${draw.pick(['a new drying area', 'more raised beds', 'a further fermentation room', 'solar dryers'])} ` +
      `at ${station}.`,
  ].join('\n\n');
  const id = `gen-harvest-${String(n).padStart(5, '0')}`;
  return {
    id,
    title,
    contentType: 'text/markdown',
    url: `https://help.fernhill.example/harvests/${id}`,
    content,
  };
}

export const SCALE_SEED = 20_260_522;

/**
 * Searches a visitor of a large catalogue might make (a growing region, a variety, a process, a note, words every
 * lot page has), from the filler's own pools: their terms have long posting lists in the filler, so timing them
 * measures search over the whole index, where the help-centre questions mostly touch the help centre's passages.
 */
export function catalogueQueries(count: number, seed = SCALE_SEED + 1): string[] {
  const draw = new Draw(mulberry32(seed));
  const shapes: Array<() => string> = [
    () => `${draw.pick(PROCESSES)} ${draw.pick(VARIETIES)} from ${draw.pick(GROWING_REGIONS)}`,
    () => `${draw.pick(GROWING_REGIONS)} with ${draw.pick(NOTES)} and ${draw.pick(NOTES)}`,
    () => `${draw.pick(TEXTURES)} body ${draw.pick(FINISHES)} finish`,
    () => `lot details altitude ${draw.int(24, 46) * 50} metres ${draw.pick(GROWING_REGIONS)}`,
    () => `which producer grows ${draw.pick(VARIETIES)} under ${draw.pick(SHADE)} shade`,
    () => `cherries dried on ${draw.pick(DRYING)} after fermentation in ${draw.pick(TANKS)} tanks`,
    () => `harvest report ${draw.pick(GROWING_REGIONS)} flowering rain picking`,
    () => draw.pick(NOTES),
  ];
  return Array.from({ length: count }, () => draw.pick(shapes)());
}

/** The filler articles, endlessly: two lot pages for every harvest report, the same sequence for the same seed. */
export function* scaleArticles(seed = SCALE_SEED): Generator<Article> {
  const draw = new Draw(mulberry32(seed));
  for (let n = 1; ; n++) yield n % 3 === 0 ? harvestReport(draw, n) : lotPage(draw, n);
}
