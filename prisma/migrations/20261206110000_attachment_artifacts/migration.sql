-- What a Playwright test attaches on purpose (testInfo.attach, by path or by body, any content type)
-- is kept as an artifact of its own kind, under the attachment's name and content type, within the
-- run's caps (docs/PLAYWRIGHT.md, "Attachments"); retention deletes it with the run's other artifacts.
ALTER TYPE "ArtifactKind" ADD VALUE 'attachment';
