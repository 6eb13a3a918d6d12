/**
 * What a run's pages reported that explains a failure: console errors, uncaught exceptions, and
 * requests that failed (a network error, or an answer of status 400 or more); and the requests the
 * network policy refused while the run ran (`blocked`: `url` is the host and port asked for,
 * `message` the refusal's sentence naming the rule). The worker records them; the detailed view shows them.
 */
export type PageEvent = {
  kind: 'console' | 'exception' | 'request' | 'blocked';
  at: Date;
  message: string;
  url: string | null;
  method: string | null;
  /** The answer's status; null for a request that got no answer, and for other kinds. */
  status: number | null;
};
