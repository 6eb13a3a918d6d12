import { existsSync } from 'node:fs';
import path from 'node:path';
import { CHROMIUM_BASE_ARGS, CHROMIUM_DISABLED_FEATURES } from '../../../browser/browser-pool';
import { INSIDE, type Layout } from './sandboxed-cli';
import { OPTIONS_FILE, type WrapperOptions } from '../inside/protocol';
import type { PlaywrightEvidence, PlaywrightTestRef, RunPlaywrightOptions } from './types';

function evidenceModes(
  evidence: PlaywrightEvidence,
  video: boolean,
): Pick<WrapperOptions, 'trace' | 'video' | 'screenshot'> {
  if (evidence === 'off') return { trace: 'off', video: 'off', screenshot: 'off' };
  if (evidence === 'on') return { trace: 'on', video: video ? 'on' : 'off', screenshot: 'on' };
  return { trace: ON_FAILURE_TRACE, video: video ? 'retain-on-failure' : 'off', screenshot: 'only-on-failure' };
}

/**
 * The on-failure trace: recorded for every test and kept for a failure, with the DOM snapshots at
 * each action, the network log and the sources, without the screencast (its film strip). On a real
 * suite of short tests the screencast was about 5% of the suite's wall (docs/BENCHMARKS.md, "Where
 * the time goes on IT Tools"); the failure's own screenshot is kept apart. `on` keeps the screencast.
 */
const ON_FAILURE_TRACE = { mode: 'retain-on-failure', snapshots: true, screenshots: false, sources: true };

/**
 * Whether the host has the headless shell the run would launch: the sandbox sees the host's /usr at
 * the same path, and a run without one the host itself.
 */
const hasHeadlessShell = (layout: Layout): boolean => existsSync(layout.headlessShell);

export function wrapperOptions(
  options: RunPlaywrightOptions,
  tests: PlaywrightTestRef[],
  video: boolean,
  layout: Layout = INSIDE,
  selectBy: WrapperOptions['selectBy'] = 'list',
): WrapperOptions {
  return {
    bundleDir: layout.bundle,
    configDir: path.posix.dirname(path.posix.join(layout.bundle, options.configFile)),
    outputDir: layout.output,
    reporter: `${layout.runtime}/reporter.js`,
    resultsFile: `${layout.state}/results.jsonl`,
    testListFile: `${layout.state}/test-list.txt`,
    tests: tests.map(({ file, project, titlePath }) => ({ file, project, titlePath })),
    workers: options.workers ?? 1,
    baseURL: options.baseUrl ?? null,
    proxy: options.proxy ?? null,
    retries: options.retries ?? null,
    timeoutMs: options.timeoutMs ?? null,
    chromium: layout.chromium,
    headlessShell: hasHeadlessShell(layout) ? layout.headlessShell : null,
    // Through a proxy, loopback too goes through it (Chromium sends it direct by default), and WebRTC
    // sends no UDP of its own: the proxy is the only way to the target.
    chromiumArgs: options.proxy
      ? [
          ...CHROMIUM_BASE_ARGS,
          '--proxy-bypass-list=<-loopback>',
          '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
        ]
      : CHROMIUM_BASE_ARGS,
    disabledFeatures: CHROMIUM_DISABLED_FEATURES,
    selectBy,
    ...evidenceModes(options.evidence ?? 'retain-on-failure', video),
  };
}

/** The wrapper's file name, next to the team's config (relative paths in the config keep their meaning). */
export const WRAPPER_FILE = '.testrun.config.ts';

/**
 * The wrapper config: a module of three lines that hands the team's config to the service's
 * (inside/wrapper-config.ts, wrapConfig), with the options the worker writes beside the run's state
 * (inside/protocol.ts, WrapperOptions). Next to the team's config, its relative imports mean what
 * they mean there, and the runner compiles it as it compiles the team's.
 */
export function wrapperSource(configFile: string, layout: Layout = INSIDE): string {
  const team = `./${path.posix.basename(configFile)}`;
  return `// Written by Testrun: the team's config with the service's settings.
import * as loaded from ${JSON.stringify(team)};
import { wrapConfig } from ${JSON.stringify(`${layout.runtime}/wrapper-config.js`)};

export default wrapConfig(loaded, ${JSON.stringify(`${layout.state}/${OPTIONS_FILE}`)});
`;
}
