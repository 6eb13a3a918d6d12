import type { Page, Response } from 'playwright';
import { formatDuration, type StepOf } from '@testrun/contracts';
import { EGRESS_ERROR_HEADER } from '../../network/egress-proxy';
import { errorText, isTimeoutError } from './classify-error';
import { displayUrl, quote } from '../../support/text-format';
import {
  expectationFailed,
  httpError,
  invalidDefinition,
  StepFailure,
  targetBlocked,
  targetUnreachable,
} from './step-failure';
import { callOptions } from './time-left';
import type { ActionContext } from './types';

/** Resolves a step URL against the run's base URL; only http(s) may be opened (no file://, no javascript:). */
export function resolveStepUrl(url: string, baseUrl: string): string {
  let resolved: URL;
  try {
    resolved = new URL(url, baseUrl);
  } catch {
    throw invalidDefinition(`URL ${quote(url)} cannot be resolved against the base URL ${quote(displayUrl(baseUrl))}`);
  }
  if (resolved.protocol !== 'http:' && resolved.protocol !== 'https:') {
    throw invalidDefinition(`URL ${quote(displayUrl(resolved.href))} is not http(s)`);
  }
  return resolved.href;
}

/** Opens the step's URL and waits for the page to load; an error status or a network failure ends the step. */
export async function goto(page: Page, step: StepOf<'goto'>, ctx: ActionContext): Promise<undefined> {
  const url = resolveStepUrl(step.url, ctx.baseUrl);
  const refused = ctx.targetPolicy?.checkUrl(url);
  if (refused && !refused.allowed) throw targetBlocked(refused);
  // The main document's last response, kept because a failed navigation (an error status with an
  // empty body, a 401 challenge) rejects goto without handing the response back.
  let mainResponse: Response | null = null;
  const onResponse = (response: Response) => {
    const request = response.request();
    if (request.isNavigationRequest() && request.frame() === page.mainFrame()) mainResponse = response;
  };
  page.on('response', onResponse);
  try {
    const response = await page.goto(url, { waitUntil: 'load', ...callOptions(ctx) });
    // null: same-document navigation (only the hash changed); nothing was fetched.
    if (response && egressNetError(response)) throw unreachableVia(response, url);
    if (response && response.status() >= 400)
      throw httpError(response.request().method(), response.url(), response.status());
  } catch (error) {
    if (error instanceof StepFailure) throw error;
    const explained = await explainNavigationError(error, page, url, mainResponse, ctx);
    if (explained === UNEXPLAINED) throw error;
    if (explained !== RECOVERED) throw explained;
  } finally {
    page.off('response', onResponse);
  }
}

/** explainNavigationError's answers when the navigation did end well after all, or it cannot say why it did not. */
const RECOVERED = Symbol('recovered');
const UNEXPLAINED = Symbol('unexplained');

const NET_ERRORS: ReadonlyArray<[RegExp, string]> = [
  [/^ERR_CONNECTION_REFUSED$/, 'connection refused'],
  [/^ERR_NAME_NOT_RESOLVED$|^ERR_NAME_RESOLUTION_FAILED$/, 'DNS lookup failed'],
  [/^ERR_CONNECTION_RESET$/, 'connection reset'],
  [/^ERR_CONNECTION_CLOSED$|^ERR_EMPTY_RESPONSE$/, 'connection closed without an answer'],
  [/^ERR_CONNECTION_TIMED_OUT$|^ERR_TIMED_OUT$/, 'connection timed out'],
  [
    /^ERR_ADDRESS_UNREACHABLE$|^ERR_NETWORK_UNREACHABLE$|^ERR_INTERNET_DISCONNECTED$|^ERR_ADDRESS_INVALID$/,
    'network unreachable',
  ],
  [/^ERR_CERT_|^ERR_SSL_|^ERR_BAD_SSL_|^ERR_TLS_/, 'TLS error'],
  [/^ERR_UNSAFE_PORT$/, 'port blocked by the browser as unsafe'],
  [/^ERR_TOO_MANY_REDIRECTS$/, 'too many redirects'],
  [/^ERR_CONNECTION_FAILED$|^ERR_TUNNEL_CONNECTION_FAILED$/, 'connection failed'],
];

/** The network error the worker's egress proxy met on the way to the target, when this is its 502. */
function egressNetError(response: Response): string | undefined {
  const code = response.status() === 502 ? response.headers()[EGRESS_ERROR_HEADER] : undefined;
  return code !== undefined && /^ERR_[A-Z0-9_]+$/.test(code) ? code : undefined;
}

/** The step's failure for a target the egress proxy could not reach, worded as Chromium's own error would be. */
function unreachableVia(response: Response, url: string): StepFailure {
  const code = egressNetError(response) ?? 'ERR_FAILED';
  const detail = NET_ERRORS.find(([pattern]) => pattern.test(code))?.[1] ?? 'network error';
  return targetUnreachable(detail, url, `net::${code}`);
}

async function explainNavigationError(
  error: unknown,
  page: Page,
  url: string,
  mainResponse: Response | null,
  ctx: ActionContext,
): Promise<StepFailure | typeof RECOVERED | typeof UNEXPLAINED> {
  const text = errorText(error);
  if (mainResponse !== null && egressNetError(mainResponse)) return unreachableVia(mainResponse, url);
  if (mainResponse !== null && mainResponse.status() >= 400)
    return httpError(mainResponse.request().method(), mainResponse.url(), mainResponse.status());
  const net = /net::(ERR_[A-Z0-9_]+)/.exec(text);
  if (net?.[1] !== undefined) {
    const code = net[1];
    const detail = NET_ERRORS.find(([pattern]) => pattern.test(code))?.[1] ?? 'network error';
    return targetUnreachable(detail, url, `net::${code}`);
  }
  if (isTimeoutError(error)) {
    const within = `within ${formatDuration(ctx.stepTimeoutMs)}`;
    if (mainResponse === null) return targetUnreachable(`no answer ${within}`, url, undefined, true);
    return expectationFailed(`page ${displayUrl(url)} answered but did not finish loading ${within}`, true);
  }
  if (/interrupted by another navigation/i.test(text)) {
    // The page sent itself elsewhere while loading (a client-side redirect): wait for that page.
    await page.waitForLoadState('load', callOptions(ctx)).catch(() => undefined);
    if (page.url().startsWith('chrome-error://')) return targetUnreachable('navigation failed', url);
    return RECOVERED;
  }
  if (/Download is starting/i.test(text))
    return expectationFailed(`${displayUrl(url)} started a download instead of showing a page`, false);
  return UNEXPLAINED;
}
