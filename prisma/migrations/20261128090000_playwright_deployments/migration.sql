-- Playwright tests: a deployment whose project file has a `playwright:` section names the bundle
-- it was discovered from (`sha256:…`, in the artifact store) and keeps discovery's warnings (a
-- `webServer` the service ignores, another @playwright/test major.minor than the service's).

-- AlterTable
ALTER TABLE "deployments" ADD COLUMN "bundle" TEXT;
ALTER TABLE "deployments" ADD COLUMN "warnings" JSONB NOT NULL DEFAULT '[]';
