import { stopProcessMetrics } from '@testrun/core/process-metrics';

/*
 * Runs after each test file. Jest loads every file's modules afresh in a context of its own, in a
 * process that runs many files: whatever a file's code registers with the process and never
 * removes keeps that file's whole module graph alive, and the jest worker grows by it file after
 * file. The default process metrics' GC observers are such registrations (an API or a worker keeps
 * its metrics for the life of its process).
 */
afterAll(() => {
  stopProcessMetrics();
});
