#!/usr/bin/env node
'use strict';
// Last step of the GitHub Action: turns the `testrun run --json` document (RunReport or
// FailureReport, packages/contracts/src/cli-report.ts) into step outputs
// (`status`, `suite-run-url`), a Markdown job summary and the step's verdict. Plain Node with no
// dependencies, so it runs even when the CLI could not start.
const fs = require('node:fs');

const ICON = { passed: '✅', failed: '❌', error: '⚠️', skipped: '⏭️', timeout: '⏱️', api_error: '⚠️' };

/** Reads the CLI's JSON document; null when the CLI printed none (it could not start, or a usage error). */
function readResult(file) {
  try {
    const text = fs.readFileSync(file, 'utf8').trim();
    return text ? JSON.parse(text) : null;
  } catch {
    return null;
  }
}

/** The verdict as one word: the status, or `timeout` / `api_error` when the wait or the API failed. */
function verdictOf(result) {
  if (!result) return 'error';
  if (result.error) return 'api_error';
  if (result.timedOut) return 'timeout';
  return result.status;
}

/** Text safe inside a Markdown table cell. */
function cell(text) {
  return String(text ?? '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/\|/g, '\\|')
    .replace(/\r?\n/g, ' ');
}

function buildSummary(result, verdict) {
  const lines = [`### Testrun: ${ICON[verdict] ?? ''} ${verdict}`, ''];
  if (!result) {
    lines.push('The Testrun CLI produced no result; see the step log for the reason.');
    return lines.join('\n');
  }
  if (result.error) {
    lines.push(
      `The API refused the request: \`${cell(result.error.code ?? result.error.kind)}\` ${cell(result.error.detail)}`,
    );
    return lines.join('\n');
  }
  const what =
    result.kind === 'suite'
      ? `${result.project}/${result.suite}`
      : result.kind === 'project'
        ? result.project
        : result.testId;
  lines.push(
    `**${cell(what)}** (${result.kind})${result.suiteRunUrl ? ` · [Open the detailed view](${result.suiteRunUrl})` : ''}`,
    '',
  );
  const c = result.counts ?? {};
  lines.push('| Passed | Failed | Error | Skipped | Total |', '|---:|---:|---:|---:|---:|');
  lines.push(`| ${c.passed ?? 0} | ${c.failed ?? 0} | ${c.error ?? 0} | ${c.skipped ?? 0} | ${c.total ?? 0} |`, '');
  const bad = (result.tests ?? []).filter((t) => t.status !== 'passed' && t.status !== 'skipped');
  if (bad.length > 0) {
    lines.push('| Test | Status | What happened |', '|---|---|---|');
    for (const t of bad) {
      const name = t.viewUrl ? `[${cell(t.name)}](${t.viewUrl})` : cell(t.name);
      lines.push(
        `| ${name} | ${cell(t.status)} | ${cell(t.result_summary ?? (t.status === 'queued' || t.status === 'running' ? 'not finished within the wait budget' : ''))} |`,
      );
    }
    lines.push('');
  }
  if (result.message) lines.push(cell(result.message));
  return lines.join('\n');
}

function main(env) {
  const result = env.RESULT_FILE ? readResult(env.RESULT_FILE) : null;
  const verdict = verdictOf(result);
  const exitCode = Number(env.EXIT_CODE || (verdict === 'passed' ? 0 : 2));
  const url = (result && result.suiteRunUrl) || '';
  if (env.GITHUB_OUTPUT) fs.appendFileSync(env.GITHUB_OUTPUT, `status=${verdict}\nsuite-run-url=${url}\n`);
  if (env.GITHUB_STEP_SUMMARY) fs.appendFileSync(env.GITHUB_STEP_SUMMARY, `${buildSummary(result, verdict)}\n`);
  if (exitCode !== 0) {
    const why = (result && (result.message || (result.error && result.error.detail))) || 'testrun run did not pass';
    process.stdout.write(`::error title=Testrun ${verdict}::${why.replace(/\r?\n/g, ' ')}${url ? ` ${url}` : ''}\n`);
  }
  return env.FAIL_ON === 'never' ? 0 : exitCode === 0 ? 0 : 1;
}

if (require.main === module) process.exitCode = main(process.env);
module.exports = { main, buildSummary, verdictOf };
