-- Secret variables: values a test's steps reference as {{secrets.NAME}}, stored per workspace or
-- per project as AES-256-GCM ciphertext; and a run's own variables, sealed with the run and erased
-- when it ends, like its headers.

-- AlterTable
ALTER TABLE "runs" ADD COLUMN "variables_sealed" BYTEA;

-- CreateTable
CREATE TABLE "secret_variables" (
    "id" TEXT NOT NULL,
    "workspace_id" TEXT NOT NULL,
    "project_id" TEXT,
    "name" TEXT NOT NULL,
    "value_sealed" BYTEA NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "secret_variables_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "secret_variables_workspace_id_project_id_name_key" ON "secret_variables"("workspace_id", "project_id", "name");

-- CreateIndex
CREATE INDEX "secret_variables_project_id_idx" ON "secret_variables"("project_id");

-- AddForeignKey
ALTER TABLE "secret_variables" ADD CONSTRAINT "secret_variables_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "secret_variables" ADD CONSTRAINT "secret_variables_project_id_fkey" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE CASCADE;
