/**
 * Parley's icon: a speech bubble on the portal's accent colour (packages/portal/src/styles.css `--accent`). The SVG is
 * what pages link (`<link rel="icon">`); `/favicon.ico` is for clients that ask for it by that name without reading a
 * page (browsers on a JSON or image URL, bookmark and feed readers).
 */
export const FAVICON_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#2d5bd7"/><path d="M10 8h12a3 3 0 0 1 3 3v7a3 3 0 0 1-3 3h-6l-5 4.5V21h-1a3 3 0 0 1-3-3v-7a3 3 0 0 1 3-3z" fill="#fff"/><g fill="#2d5bd7"><circle cx="12" cy="14.5" r="1.6"/><circle cx="16" cy="14.5" r="1.6"/><circle cx="20" cy="14.5" r="1.6"/></g></svg>';

/** The same icon rendered at 32×32 (PNG), for the ICO container. */
const FAVICON_PNG_32 = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAACAAAAAgCAYAAABzenr0AAACNElEQVR4nMSXzU8TQRjGn3fcEpMqiEZAY4KeRGGNN9F49yPxD7D4QYiJ' +
    'ifGiB/HkWTTRiyYePGgs6s14UeLFk0pMSBqKUE4WFEIhQPkoX2V3mGmhaUg6ne0uu79kk5md2fd5MvPuzr4Gijja/ndfOLtyj4BWcZ0W' +
    't+rgDZMciImrNxPa/Tz55lh6a4C2Gmbb8CVw+7W4cxg7Ccc4iN2Kdx//WjDQHBm6wAg98BV2WZogMzJSy2npj3ByCH4iVsLK2iazKXPT' +
    'd3GJ2GqqohuGTDgEhNRmYikCMyC1DSJqREBIbUM14UDNLty/Wodz5p5c2wnTcxZ+xhfx7MNkrl0KpYHO6/W42FqNSpCGr5yvQUhk2YMX' +
    '46jIwJnmMNxSLobSQO1eZ8teSQyGgDF0J45MrKFzcy+77uaPC1W/saFKK662gbdfZjCYXCm0Jar+o44GrbjaBmRGf+9bKLQl5fo6kNk2' +
    'xEsN9keb4AWnriVKjgWehEoD6UULbikXQ2mgdyADt/yKq2Mok7DrXQqWDZxtCWN/tfOz4Ed//ixQoUzC7WxPyifRFKI9s3CD9mtYzLrY' +
    '1ocvx/Dt9wLc4tjA8irHnaf/0JdYghc4MjAzb+H241EMj67CK6glMjgh/kzqdSYfORjC/6ksvIJznhKvIcV0H/BSPA/FRD2ib8BrpDbL' +
    '2vyVWIw0fIenpTZLfDyRFB+CDvgNZ+1SO/cpHug++UnWarnCcceFpYaoC983fZZdKh4LojzfAAAA//8qib40AAAABklEQVQDAFee1iWL' +
    'U39RAAAAAElFTkSuQmCC',
  'base64',
);

/**
 * An ICO file holding one 32×32 PNG image (the PNG-in-ICO form every browser since IE/Windows Vista reads): a
 * 6-byte ICONDIR (reserved 0, type 1 = icon, one image), one 16-byte ICONDIRENTRY (width, height, colours, reserved,
 * planes, bits per pixel, size, offset), then the PNG.
 */
export function faviconIco(png: Buffer = FAVICON_PNG_32, size = 32): Buffer {
  const header = Buffer.alloc(6 + 16);
  header.writeUInt16LE(0, 0);
  header.writeUInt16LE(1, 2);
  header.writeUInt16LE(1, 4);
  header.writeUInt8(size % 256, 6);
  header.writeUInt8(size % 256, 7);
  header.writeUInt8(0, 8);
  header.writeUInt8(0, 9);
  header.writeUInt16LE(1, 10);
  header.writeUInt16LE(32, 12);
  header.writeUInt32LE(png.length, 14);
  header.writeUInt32LE(header.length, 18);
  return Buffer.concat([header, png]);
}
