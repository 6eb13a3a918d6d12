-- Evidence policies: what a run keeps (trace, video, step screenshots), chosen per project and per
-- test in the project file and per request. The project's and test's settings are stored as given
-- (any of the three keys); each run stores the policy resolved when it was created. A run created
-- before this migration has none and runs with the deployment's default.

-- AlterTable
ALTER TABLE "projects" ADD COLUMN "evidence" JSONB;

-- AlterTable
ALTER TABLE "tests" ADD COLUMN "evidence" JSONB;

-- AlterTable
ALTER TABLE "runs" ADD COLUMN "evidence" JSONB;
