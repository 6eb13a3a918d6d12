-- Webhooks: endpoints per workspace, the outbox of events to send them (one row per endpoint and
-- event, written by triggers in the very statement that makes a run or suite run terminal), and the
-- delivery log. Closed sets (events, message states) are CHECK constraints.

-- CreateTable
CREATE TABLE "webhook_endpoints" (
    "id" TEXT NOT NULL,
    "workspace_id" TEXT NOT NULL,
    "project_id" TEXT,
    "url" TEXT NOT NULL,
    "events" TEXT[] NOT NULL,
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "secret_sealed" BYTEA NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "webhook_endpoints_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "webhook_endpoints_events_known" CHECK (
      cardinality("events") > 0 AND "events" <@ ARRAY['run.finished', 'suite_run.finished']::TEXT[])
);

-- CreateTable
CREATE TABLE "webhook_messages" (
    "id" TEXT NOT NULL,
    "endpoint_id" TEXT NOT NULL,
    "workspace_id" TEXT NOT NULL,
    "event" TEXT NOT NULL,
    "resource_id" TEXT NOT NULL,
    "body" TEXT,
    "state" TEXT NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "round" INTEGER NOT NULL DEFAULT 1,
    "queued_round" INTEGER,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_attempt_at" TIMESTAMPTZ(3),
    "delivered_at" TIMESTAMPTZ(3),

    CONSTRAINT "webhook_messages_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "webhook_messages_event_known" CHECK ("event" IN ('run.finished', 'suite_run.finished')),
    CONSTRAINT "webhook_messages_state_known" CHECK ("state" IN ('pending', 'delivered', 'failed'))
);

-- CreateTable
CREATE TABLE "webhook_attempts" (
    "message_id" TEXT NOT NULL,
    "attempt" INTEGER NOT NULL,
    "endpoint_id" TEXT NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "response_status" INTEGER,
    "error" TEXT,
    "duration_ms" INTEGER NOT NULL,

    CONSTRAINT "webhook_attempts_pkey" PRIMARY KEY ("message_id","attempt")
);

-- CreateIndex
CREATE INDEX "webhook_endpoints_workspace_id_idx" ON "webhook_endpoints"("workspace_id");

-- CreateIndex
CREATE INDEX "webhook_endpoints_project_id_idx" ON "webhook_endpoints"("project_id");

-- CreateIndex
CREATE INDEX "webhook_messages_state_created_at_idx" ON "webhook_messages"("state", "created_at");

-- CreateIndex
CREATE INDEX "webhook_messages_endpoint_id_created_at_idx" ON "webhook_messages"("endpoint_id", "created_at");

-- CreateIndex
CREATE INDEX "webhook_messages_workspace_id_idx" ON "webhook_messages"("workspace_id");

-- CreateIndex
CREATE INDEX "webhook_attempts_endpoint_id_at_idx" ON "webhook_attempts"("endpoint_id", "at");

-- AddForeignKey
ALTER TABLE "webhook_endpoints" ADD CONSTRAINT "webhook_endpoints_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_endpoints" ADD CONSTRAINT "webhook_endpoints_project_id_fkey" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_messages" ADD CONSTRAINT "webhook_messages_endpoint_id_fkey" FOREIGN KEY ("endpoint_id") REFERENCES "webhook_endpoints"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_messages" ADD CONSTRAINT "webhook_messages_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_attempts" ADD CONSTRAINT "webhook_attempts_message_id_fkey" FOREIGN KEY ("message_id") REFERENCES "webhook_messages"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_attempts" ADD CONSTRAINT "webhook_attempts_endpoint_id_fkey" FOREIGN KEY ("endpoint_id") REFERENCES "webhook_endpoints"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- A message id (the `webhook-id` header): `msg_`, 12 hex digits of the millisecond clock (new rows
-- land at the end of the primary-key index) and 20 random hex digits.
CREATE FUNCTION "webhook_message_id"() RETURNS TEXT LANGUAGE sql VOLATILE AS $$
  SELECT 'msg_' || lpad(to_hex(floor(extract(epoch FROM clock_timestamp()) * 1000)::BIGINT), 12, '0')
    || substr(replace(gen_random_uuid()::TEXT, '-', ''), 1, 20)
$$;

-- One outbox row per enabled endpoint of the row's workspace subscribed to the event TG_ARGV[0]
-- (an endpoint a project file manages only for that project's runs and suite runs).
-- Called by the triggers below, so it runs inside the statement that made the row terminal: the
-- event is committed with the transition or not at all, whichever code path wrote it.
CREATE FUNCTION "webhook_enqueue_finished"() RETURNS TRIGGER LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "webhook_messages" ("id", "endpoint_id", "workspace_id", "event", "resource_id", "state")
  SELECT "webhook_message_id"(), e."id", NEW."workspace_id", TG_ARGV[0], NEW."id", 'pending'
  FROM "webhook_endpoints" e
  WHERE e."workspace_id" = NEW."workspace_id" AND e."enabled" AND TG_ARGV[0] = ANY (e."events")
    AND (e."project_id" IS NULL OR e."project_id" = NEW."project_id");
  RETURN NULL;
END
$$;

-- A run or suite run moving from queued/running to a terminal status.
CREATE TRIGGER "runs_webhook_finished" AFTER UPDATE OF "status" ON "runs" FOR EACH ROW
  WHEN (OLD."status" IN ('queued', 'running') AND NEW."status" IN ('passed', 'failed', 'error', 'skipped'))
  EXECUTE FUNCTION "webhook_enqueue_finished"('run.finished');
CREATE TRIGGER "suite_runs_webhook_finished" AFTER UPDATE OF "status" ON "suite_runs" FOR EACH ROW
  WHEN (OLD."status" IN ('queued', 'running') AND NEW."status" IN ('passed', 'failed', 'error', 'skipped'))
  EXECUTE FUNCTION "webhook_enqueue_finished"('suite_run.finished');

-- A run created terminal (a disabled test's run is created `skipped`), and a suite run created
-- terminal (every test disabled): they finished too, at creation.
CREATE TRIGGER "runs_webhook_created_finished" AFTER INSERT ON "runs" FOR EACH ROW
  WHEN (NEW."status" IN ('passed', 'failed', 'error', 'skipped'))
  EXECUTE FUNCTION "webhook_enqueue_finished"('run.finished');
CREATE TRIGGER "suite_runs_webhook_created_finished" AFTER INSERT ON "suite_runs" FOR EACH ROW
  WHEN (NEW."status" IN ('passed', 'failed', 'error', 'skipped'))
  EXECUTE FUNCTION "webhook_enqueue_finished"('suite_run.finished');
