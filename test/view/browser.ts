import type { Page } from 'playwright';
import { BrowserPool } from '@testrun/worker';

/**
 * The worker's own browser owner: the runs the tests seed execute in its contexts, and the tests
 * look at the pages through another context of the same Chromium. Close it in afterAll.
 */
export function createBrowserPool(): BrowserPool {
  return new BrowserPool({ executablePath: process.env.CHROMIUM_PATH || undefined });
}

/** A measure of how much a PNG shows: a blank render has one colour and no variance. */
export type PngMeasure = { width: number; height: number; variance: number; colours: number };

/**
 * Decodes a PNG in the browser and measures it. Runs on about:blank, whose page has no
 * Content-Security-Policy in the way.
 */
export async function measurePng(page: Page, png: Buffer): Promise<PngMeasure> {
  await page.goto('about:blank');
  return page.evaluate(async (b64) => {
    const img = new Image();
    img.src = `data:image/png;base64,${b64}`;
    await img.decode();
    const canvas = document.createElement('canvas');
    canvas.width = img.naturalWidth;
    canvas.height = img.naturalHeight;
    const ctx = canvas.getContext('2d');
    if (!ctx) throw new Error('no 2d canvas context');
    ctx.drawImage(img, 0, 0);
    const data = ctx.getImageData(0, 0, canvas.width, canvas.height).data;
    let sum = 0;
    let sumSq = 0;
    const colours = new Set<number>();
    const n = data.length / 4;
    for (let i = 0; i + 2 < data.length; i += 4) {
      const [r = 0, g = 0, b = 0] = data.subarray(i, i + 3);
      const lum = 0.2126 * r + 0.7152 * g + 0.0722 * b;
      sum += lum;
      sumSq += lum * lum;
      if (colours.size < 5000) colours.add((r << 16) | (g << 8) | b);
    }
    const mean = sum / n;
    return { width: canvas.width, height: canvas.height, variance: sumSq / n - mean * mean, colours: colours.size };
  }, png.toString('base64'));
}
