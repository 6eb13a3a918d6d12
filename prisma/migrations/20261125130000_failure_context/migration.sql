-- What the view shows of a failure besides its message: what a failed expectation wanted and what
-- the page had (in full; the message quotes them cut short), the page's URL and title when the step
-- went wrong, and the console errors, uncaught exceptions and failed requests of the run's pages.
ALTER TABLE step_results
  ADD COLUMN expected TEXT,
  ADD COLUMN received TEXT,
  ADD COLUMN page_url TEXT,
  ADD COLUMN page_title TEXT;

CREATE TYPE "PageEventKind" AS ENUM ('console', 'exception', 'request');

CREATE TABLE page_events (
  id TEXT PRIMARY KEY,
  run_id TEXT NOT NULL REFERENCES runs(id) ON UPDATE CASCADE ON DELETE CASCADE,
  attempt INTEGER NOT NULL,
  kind "PageEventKind" NOT NULL,
  at TIMESTAMPTZ(3) NOT NULL,
  message TEXT NOT NULL,
  url TEXT,
  method TEXT,
  status INTEGER
);

CREATE INDEX page_events_run_id_attempt_idx ON page_events (run_id, attempt);
