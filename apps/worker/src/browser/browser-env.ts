import path from 'node:path';

/** Where programs, fonts, the locale and the time zone are: configuration, never a secret. */
const PASSED_ON = ['PATH', 'LANG', 'LANGUAGE', 'TZ', 'FONTCONFIG_FILE', 'FONTCONFIG_PATH'];

/** What a headed browser (a developer's own screen) needs to reach the display. */
const DISPLAY = ['DISPLAY', 'WAYLAND_DISPLAY', 'XDG_RUNTIME_DIR'];

/** PATH when the worker has none: Debian's `/usr/bin/chromium` is a shell script that runs coreutils. */
const DEFAULT_PATH = '/usr/local/bin:/usr/bin:/bin';

/**
 * The whole environment Chromium is started with (and the namespace's relay, which passes it on):
 * never the worker's own, which holds `TESTRUN_SECRET`, `DATABASE_URL`, `REDIS_URL`, the artifact
 * store's credentials and whatever else the deployment sets. A compromised renderer, GPU or utility
 * process, a DevTools endpoint, or a tenant's code run in the browser could read the environment
 * of the process it is in; this one tells it nothing.
 *
 * What passes, and why:
 * - `PATH`: the Debian launcher script runs `findmnt`, `grep` and others (a default when unset).
 * - `LANG`, `LANGUAGE`, `LC_*`, `TZ`: pages see the locale and time zone the deployment chose.
 * - `FONTCONFIG_FILE`, `FONTCONFIG_PATH`, when set: an image that keeps its fonts elsewhere.
 * - `HOME`, `XDG_CONFIG_HOME`, `XDG_CACHE_HOME`, `XDG_DATA_HOME`, `TMPDIR`: all in `home`, the
 *   browser's scratch directory, so what Chromium and fontconfig write there (caches, NSS database,
 *   crash reports, temporary files) is its own and is removed with it, not the worker user's.
 * - Headed only: `DISPLAY`, `WAYLAND_DISPLAY`, `XDG_RUNTIME_DIR`, and `XAUTHORITY` (which otherwise
 *   defaults to a file in the real home), to reach the screen.
 */
export function browserEnv(
  home: string,
  headless: boolean,
  from: Readonly<Record<string, string | undefined>> = process.env,
): Record<string, string> {
  const env: Record<string, string> = { PATH: DEFAULT_PATH };
  const names = [...PASSED_ON, ...Object.keys(from).filter((name) => /^LC_[A-Z]+$/.test(name))];
  if (!headless) names.push(...DISPLAY);
  for (const name of names) {
    const value = from[name];
    if (value !== undefined && value !== '') env[name] = value;
  }
  if (!headless && from.HOME) env.XAUTHORITY = from.XAUTHORITY ?? path.join(from.HOME, '.Xauthority');
  return {
    ...env,
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, '.config'),
    XDG_CACHE_HOME: path.join(home, '.cache'),
    XDG_DATA_HOME: path.join(home, '.local', 'share'),
    TMPDIR: home,
  };
}
