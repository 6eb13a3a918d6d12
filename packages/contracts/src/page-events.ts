/**
 * What a run's pages reported that explains a failure: console errors, uncaught exceptions, and
 * requests that failed (a network error, or an answer of status 400 or more). The worker records
 * them; the detailed view shows them.
 */
export type PageEvent = {
  kind: 'console' | 'exception' | 'request';
  at: Date;
  message: string;
  url: string | null;
  method: string | null;
  /** The answer's status; null for a request that got no answer, and for other kinds. */
  status: number | null;
};
