-- Removing baseline images no row refers to any more (docs/VISUAL.md, "Storage"). An image is stored
-- once per workspace by its SHA-256 (`baselines/<workspace>/<sha256>`) and referred to by the
-- storage_key of baselines, baseline_history and visual_changes rows. The store is never listed:
-- whenever one of those rows stops referring to a key (deleted, by retention or a cascade, or given
-- another image), a trigger notes the key as a candidate, and the worker's housekeeping deletes the
-- image once no row refers to it and the store has not written it for a while.
CREATE TABLE "baseline_image_candidates" (
    "storage_key" TEXT NOT NULL,
    "noticed_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "baseline_image_candidates_pkey" PRIMARY KEY ("storage_key")
);
CREATE INDEX "baseline_image_candidates_noticed_at_idx" ON "baseline_image_candidates"("noticed_at");

-- Whether a key is still referred to is one lookup per table.
CREATE INDEX "baselines_storage_key_idx" ON "baselines"("storage_key");
CREATE INDEX "baseline_history_storage_key_idx" ON "baseline_history"("storage_key");
CREATE INDEX "visual_changes_storage_key_idx" ON "visual_changes"("storage_key");
-- Retention trims the history of each workspace by the time an entry was replaced.
CREATE INDEX "baseline_history_workspace_id_replaced_at_idx" ON "baseline_history"("workspace_id", "replaced_at");

-- Called by the triggers below, inside the statement that removed the reference, so a key can never
-- lose its last row without being noted (whichever code path, cascade or transaction did it).
CREATE FUNCTION "baseline_image_released"() RETURNS TRIGGER LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' AND OLD."storage_key" IS NOT DISTINCT FROM NEW."storage_key" THEN
    RETURN NULL;
  END IF;
  IF OLD."storage_key" LIKE 'baselines/%' THEN
    -- Noted again when already a candidate: the collection then forgets it only if it read it after this.
    INSERT INTO "baseline_image_candidates" ("storage_key", "noticed_at") VALUES (OLD."storage_key", clock_timestamp())
    ON CONFLICT ("storage_key") DO UPDATE SET "noticed_at" = EXCLUDED."noticed_at";
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER "baselines_image_released" AFTER DELETE OR UPDATE OF "storage_key" ON "baselines"
  FOR EACH ROW EXECUTE FUNCTION "baseline_image_released"();
CREATE TRIGGER "baseline_history_image_released" AFTER DELETE OR UPDATE OF "storage_key" ON "baseline_history"
  FOR EACH ROW EXECUTE FUNCTION "baseline_image_released"();
CREATE TRIGGER "visual_changes_image_released" AFTER DELETE OR UPDATE OF "storage_key" ON "visual_changes"
  FOR EACH ROW EXECUTE FUNCTION "baseline_image_released"();
