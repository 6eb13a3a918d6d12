import { createRequire } from 'node:module';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';

// playwright-core is a dependency of apps/api (it ships the trace viewer the view serves); the tests
// drive the same package's Chromium client.
const requireFromApi = createRequire(path.resolve(__dirname, '../../apps/api/package.json'));
const { chromium } = requireFromApi('playwright-core') as typeof import('playwright-core');

export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium', args: CHROMIUM_ARGS });
}

/**
 * Decodes a PNG in the browser and measures it: a blank render has one colour and no variance.
 * Runs on about:blank, whose page has no Content-Security-Policy in the way.
 */
export async function measurePng(
  page: Page,
  png: Buffer,
): Promise<{ width: number; height: number; variance: number; colours: number }> {
  await page.goto('about:blank');
  return page.evaluate(async (b64) => {
    const img = new Image();
    img.src = `data:image/png;base64,${b64}`;
    await img.decode();
    const canvas = document.createElement('canvas');
    canvas.width = img.naturalWidth;
    canvas.height = img.naturalHeight;
    const ctx = canvas.getContext('2d')!;
    ctx.drawImage(img, 0, 0);
    const data = ctx.getImageData(0, 0, canvas.width, canvas.height).data;
    let sum = 0;
    let sumSq = 0;
    const colours = new Set<number>();
    const n = data.length / 4;
    for (let i = 0; i < data.length; i += 4) {
      const lum = 0.2126 * data[i]! + 0.7152 * data[i + 1]! + 0.0722 * data[i + 2]!;
      sum += lum;
      sumSq += lum * lum;
      if (colours.size < 5000) colours.add((data[i]! << 16) | (data[i + 1]! << 8) | data[i + 2]!);
    }
    const mean = sum / n;
    return { width: canvas.width, height: canvas.height, variance: sumSq / n - mean * mean, colours: colours.size };
  }, png.toString('base64'));
}
