import { crc32, deflateSync } from 'node:zlib';
import { pngComparator, type CompareImages } from './screenshot-comparator';

// Playwright's comparator as the worker loads it (from the playwright-core its playwright depends
// on): found in the version the worker ships, and deciding as toHaveScreenshot does.

/** A colour as [red, green, blue], each 0–255. */
type Rgb = readonly [number, number, number];

/** An RGBA PNG of `width` × `height`, each pixel the colour `paint` gives it. */
function testPng(width: number, height: number, paint: (x: number, y: number) => Rgb): Buffer {
  const rows = Buffer.alloc((width * 4 + 1) * height);
  for (let y = 0; y < height; y++) {
    const at = y * (width * 4 + 1);
    for (let x = 0; x < width; x++) {
      const [r, g, b] = paint(x, y);
      rows.set([r, g, b, 255], at + 1 + x * 4);
    }
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 6, 0, 0, 0], 8);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(rows)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

const teal: Rgb = [0, 128, 128];
const crimson: Rgb = [220, 20, 60];
/** 20 × 10 teal, with the first `changed` pixels of the top row crimson. */
const image = (changed = 0, width = 20) => testPng(width, 10, (x, y) => (y === 0 && x < changed ? crimson : teal));

function comparator(): CompareImages {
  const compare = pngComparator();
  if (!compare) throw new Error("the worker's Playwright has no comparator where one is looked for");
  return compare;
}

it("is found in the worker's Playwright, once", () => {
  expect(typeof pngComparator()).toBe('function');
  expect(pngComparator()).toBe(pngComparator());
});

it('finds the same image the same, with no diff to keep', () => {
  expect(comparator()(image(), image(), {})).toBeNull();
});

it("counts the pixels that differ, in Playwright's words, with a diff image", () => {
  const difference = comparator()(image(3), image(), {});
  expect(difference?.message).toBe('3 pixels (ratio 0.02 of all image pixels) are different.');
  expect(difference?.diff?.subarray(1, 4).toString('ascii')).toBe('PNG');
});

it('allows what the step allows: maxDiffPixels, maxDiffPixelRatio (the smaller of both), threshold', () => {
  const compare = comparator();
  expect(compare(image(3), image(), { maxDiffPixels: 3 })).toBeNull();
  expect(compare(image(3), image(), { maxDiffPixels: 2 })).not.toBeNull();
  expect(compare(image(3), image(), { maxDiffPixelRatio: 0.015 })).toBeNull();
  expect(compare(image(3), image(), { maxDiffPixels: 3, maxDiffPixelRatio: 0.01 })).not.toBeNull();
  // Teal against crimson is far apart; the laxest threshold still sees it, the default does too.
  expect(compare(image(3), image(), { threshold: 1 })).toBeNull();
  expect(compare(image(3), image(), { threshold: 0.2 })).not.toBeNull();
});

it('finds images of different sizes different, saying so', () => {
  const difference = comparator()(image(0, 21), image(), {});
  expect(difference?.message).toMatch(/^Expected an image 20px by 10px, received 21px by 10px\. /);
});
