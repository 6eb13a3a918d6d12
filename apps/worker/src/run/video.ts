import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * Where Playwright looks for its ffmpeg (`recordVideo` throws without it):
 * `$PLAYWRIGHT_BROWSERS_PATH/ffmpeg-<revision>/ffmpeg-linux`, the revision coming from
 * playwright-core's browsers.json. Null when the revision cannot be read.
 */
export function playwrightFfmpegPath(env: Record<string, string | undefined> = process.env): string | null {
  let revision: string | undefined;
  try {
    const browsersJson = path.join(
      path.dirname(require.resolve('playwright-core/package.json', { paths: [require.resolve('playwright')] })),
      'browsers.json',
    );
    const parsed = JSON.parse(readFileSync(browsersJson, 'utf8')) as {
      browsers: Array<{ name: string; revision: string }>;
    };
    revision = parsed.browsers.find((b) => b.name === 'ffmpeg')?.revision;
  } catch {
    return null;
  }
  if (!revision) return null;
  const root =
    env.PLAYWRIGHT_BROWSERS_PATH && env.PLAYWRIGHT_BROWSERS_PATH !== '0'
      ? env.PLAYWRIGHT_BROWSERS_PATH
      : path.join(os.homedir(), '.cache', 'ms-playwright');
  const binary =
    process.platform === 'win32' ? 'ffmpeg-win64.exe' : process.platform === 'darwin' ? 'ffmpeg-mac' : 'ffmpeg-linux';
  return path.join(root, `ffmpeg-${revision}`, binary);
}

/** Whether runs can be recorded as video on this machine. */
export function isVideoAvailable(env: Record<string, string | undefined> = process.env): boolean {
  const ffmpeg = playwrightFfmpegPath(env);
  return ffmpeg !== null && existsSync(ffmpeg);
}
