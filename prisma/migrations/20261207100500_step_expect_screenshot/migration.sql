-- The step language's `expectScreenshot` action (docs/VISUAL.md, "Step tests"): a step row records it
-- like any other action. Its baselines and findings use the tables visual comparison already has.

-- AlterEnum
ALTER TYPE "StepAction" ADD VALUE 'expectScreenshot' AFTER 'screenshot';
