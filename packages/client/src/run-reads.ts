import type { Run, SuiteRun } from '@testrun/contracts';
import { parseAlternateLink } from './backoff';
import type { RunWithLink } from './options';
import type { PollRead } from './poll';
import { waited, type Cached, type RequestOptions, type Transport } from './transport';

// The GETs of a run and of a suite run as the client's reads and waits use them: conditional on an
// earlier answer's `ETag` when given one, and saying whether the server held the answer (long poll).

/** GET /api/v1/runs/:id, with the view link from the `Link` header. */
export async function readRun(
  transport: Transport,
  runId: string,
  options: RequestOptions,
  cached?: Cached<Run>,
): Promise<RunWithLink & { waited: boolean; etag: string | null }> {
  const res = await transport.request<Run>('GET', `/api/v1/runs/${encodeURIComponent(runId)}`, options, cached);
  const viewUrl = parseAlternateLink(res.headers.get('link'));
  return { run: res.body, viewUrl, waited: waited(res), etag: res.headers.get('etag') };
}

/** GET /api/v1/suite-runs/:id. */
export async function readSuiteRun(
  transport: Transport,
  suiteRunId: string,
  options: RequestOptions,
  cached?: Cached<SuiteRun>,
): Promise<PollRead<SuiteRun> & { etag: string | null }> {
  const path = `/api/v1/suite-runs/${encodeURIComponent(suiteRunId)}`;
  const res = await transport.request<SuiteRun>('GET', path, options, cached);
  return { state: res.body, waited: waited(res), etag: res.headers.get('etag') };
}
