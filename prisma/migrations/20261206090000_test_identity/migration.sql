-- One Playwright test, one test id (docs/PLAYWRIGHT.md, "One test, whichever suites select it"): a
-- Playwright test (its file, title path and Playwright project, which its key digests) is one test
-- of its project, whichever suites select it. Until now each suite selecting it had a copy of its
-- own; the copies of a project's Playwright test are merged here into one, its history with it.

-- A deployment lists a test once per suite that selects it.
ALTER TABLE "deployment_tests" DROP CONSTRAINT "deployment_tests_pkey";
ALTER TABLE "deployment_tests" ADD CONSTRAINT "deployment_tests_pkey" PRIMARY KEY ("deployment_id", "suite_id", "test_id");

-- The ids of merged copies: each names the test that took its place, so an id a client kept still
-- addresses the test.
CREATE TABLE "test_aliases" (
    "id" TEXT NOT NULL,
    "test_id" TEXT NOT NULL,
    CONSTRAINT "test_aliases_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "test_aliases_test_id_idx" ON "test_aliases"("test_id");
ALTER TABLE "test_aliases" ADD CONSTRAINT "test_aliases_test_id_fkey" FOREIGN KEY ("test_id") REFERENCES "tests"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- The copy that stays: a live one (its suite live too) before an archived one, then the one in the
-- suite that comes first in the project file, then the oldest; the other copies are merged into it.
CREATE TEMPORARY TABLE "merged_tests" ON COMMIT DROP AS
SELECT c.id, c.survivor FROM (
  SELECT t.id, first_value(t.id) OVER (
      PARTITION BY t.project_id, t.key
      ORDER BY (t.archived_at IS NULL AND s.archived_at IS NULL) DESC, s.position, t.created_at, t.id) AS survivor
  FROM "tests" t JOIN "suites" s ON s.id = t.suite_id
  WHERE jsonb_typeof(t.steps) = 'object' AND t.steps ? 'playwright'
) c WHERE c.id <> c.survivor;

UPDATE "runs" r SET "test_id" = m.survivor FROM "merged_tests" m WHERE r.test_id = m.id;
UPDATE "deployment_tests" d SET "test_id" = m.survivor FROM "merged_tests" m WHERE d.test_id = m.id;
-- Aliases of an alias (none before this migration) would follow the same way.
UPDATE "test_aliases" a SET "test_id" = m.survivor FROM "merged_tests" m WHERE a.test_id = m.id;
INSERT INTO "test_aliases" ("id", "test_id") SELECT id, survivor FROM "merged_tests";
DELETE FROM "tests" t USING "merged_tests" m WHERE t.id = m.id;
