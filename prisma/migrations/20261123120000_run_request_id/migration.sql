-- The id of the API request that created a run (its X-Request-Id, as the API's access log writes
-- it), so that the worker's log lines of the run carry it too: one id follows a request to every
-- run it created. Null for runs created before this migration and for runs made outside the API.
-- The CHECK holds the API's own rule for a request id, so nothing else can be written.

-- AlterTable
ALTER TABLE "runs" ADD COLUMN "request_id" TEXT;

-- AddCheck
ALTER TABLE "runs" ADD CONSTRAINT "runs_request_id_check" CHECK ("request_id" ~ '^[A-Za-z0-9._:-]{1,128}$');
