// The parts of a Run's SELECT that read other tables or the definition (reads.ts's RUN_COLUMNS).
import type { RunOutcomeCode } from '@testrun/contracts';

/** A retried attempt as [retry, status, summary, code, message, step, started, finished, duration] (JSON). */
export type AttemptRow = [
  number,
  'failed' | 'error',
  string,
  RunOutcomeCode | null,
  string | null,
  number | null,
  string,
  string,
  number,
];

/** A run's retried attempts, oldest first, read through run_attempts' primary key. */
export const PREVIOUS_ATTEMPTS = `COALESCE((SELECT json_agg(json_build_array(a.retry, a.status, a.result_summary, a.outcome_code,
        a.outcome_message, a.outcome_step, a.started_at, a.finished_at, a.duration_ms) ORDER BY a.retry)
      FROM run_attempts a WHERE a.run_id = r.id), '[]'::json) AS previous_attempts`;

/** Requests the network policy refused during the run's current attempt, through page_events' (run_id, attempt) index. */
export const BLOCKED_REQUESTS = `(SELECT count(*)::int FROM page_events e
      WHERE e.run_id = r.id AND e.attempt = r.attempt AND e.kind = 'blocked') AS blocked_request_count`;

/** A Playwright run's definition (its file, line, title path, project); null for a step test's. */
export const PLAYWRIGHT_DEFINITION = `CASE WHEN jsonb_typeof(r.steps) = 'object' THEN r.steps->'playwright' END AS playwright`;

/**
 * A failed run's failing step, as its view shows it: the step its outcome names (outcome_step), else
 * the last of its current attempt with an error (a later step's error, a Playwright teardown's say,
 * is not the failure).
 */
export const FAILURE = `CASE WHEN r.status = 'failed' THEN (SELECT json_build_object('message', st.error, 'expected', st.expected,
        'received', st.received, 'location', st.location) FROM step_results st
      WHERE st.run_id = r.id AND st.attempt = r.attempt AND st.error IS NOT NULL
      ORDER BY st.index = r.outcome_step DESC NULLS LAST, st.index DESC LIMIT 1) END AS failure`;

/** The files a Playwright test attached in the run's current attempt, through artifacts' (run_id, attempt) index. */
export const ATTACHMENTS = `(SELECT json_agg(json_build_object('id', x.id, 'name', x.name, 'content_type', x.content_type,
        'size_bytes', x.size_bytes) ORDER BY x.created_at, x.id)
      FROM artifacts x WHERE x.run_id = r.id AND x.attempt = r.attempt AND x.kind = 'attachment') AS attachments`;

/** What the run found of its snapshots (docs/VISUAL.md), by path, through visual_changes' (run_id, path) index. */
export const VISUAL_CHANGES = `(SELECT json_agg(json_build_object('id', v.id, 'name', v.name, 'path', v.path, 'kind', v.kind,
        'approved', v.approved_at IS NOT NULL, 'approved_at', to_char(v.approved_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
        'approved_by', v.approved_by_key_name) ORDER BY v.path)
      FROM visual_changes v WHERE v.run_id = r.id) AS visual_changes`;

/**
 * How many files each run of suite run `s` attached in its current attempt, as (run_id, n): one
 * grouped count over the suite run's runs (artifacts' run_id index), joined to its test entries.
 */
export const ATTACHMENT_COUNTS = `SELECT x.run_id, count(*)::int AS n FROM artifacts x
      JOIN runs c ON c.id = x.run_id AND x.attempt = c.attempt
      WHERE c.suite_run_id = s.id AND x.kind = 'attachment' GROUP BY x.run_id`;
