-- API key scopes: what a key may do over the API. `run` (enqueue, read, cancel, rerun, list) is
-- what every key could do before, so every existing key gets it and a new key has it by default;
-- `preview` and `deploy` widen it (docs/API.md, "Scopes"). A set rather than a level, so the model
-- can grow; the CHECK holds it to the known names, never empty.

-- AlterTable
ALTER TABLE "api_keys" ADD COLUMN "scopes" TEXT[] NOT NULL DEFAULT ARRAY['run']::TEXT[],
  ADD CONSTRAINT "api_keys_scopes_known" CHECK (
    cardinality("scopes") > 0 AND "scopes" <@ ARRAY['run', 'preview', 'deploy']::TEXT[]);
