-- A worker's claim of a run is one statement that writes a token of the worker's own making
-- (docs/WORKER.md, "Claim"): a try made again after its reply was lost finds its own token on the
-- run and reads its claim back instead of taking a second attempt. Before, each try took its
-- transaction's id first and committed explicitly: four round trips a claim where one does.
-- AlterTable
ALTER TABLE "runs" ADD COLUMN "claim_token" TEXT;
