-- Playwright batches (docs/PLAYWRIGHT.md, "Batches"): a worker runs the queued Playwright runs of a
-- suite run that share a bundle in one sandbox. It reserves them under a batch id with a lease it
-- renews; while the lease lives no other claim takes them and the reconciler leaves their jobs
-- alone. A lease that lapses (the worker died) frees them: their jobs run them as usual.

-- AlterTable
ALTER TABLE "runs" ADD COLUMN "batch_id" TEXT;
ALTER TABLE "runs" ADD COLUMN "batch_lease_until" TIMESTAMPTZ(3);

-- CreateIndex
CREATE INDEX "runs_batch_id_idx" ON "runs"("batch_id");
