/**
 * `--view-shots DIR`: what the service's view shows of the suite run the harness made, photographed
 * at 1440 px with the machine's Chromium before the private stack stops: the suite page, and the
 * page of the first run that did not pass (else the first run), top and full length. The links
 * are the ones `testrun run --json` printed, their origin replaced by the private API's.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright';
import { CHROMIUM } from '../h2h/service';

interface ReportLinks {
  suiteRunUrl: string | null;
  tests: { status: string; viewUrl: string | null }[];
}

/** `link`, from the API at `apiUrl`: the view's paths are the same whatever origin the stack was told it has. */
function local(link: string, apiUrl: string): string {
  const url = new URL(link);
  return new URL(`${url.pathname}${url.search}`, apiUrl).toString();
}

/** Photographs the view's pages of the report `testrun run --json` printed into `dir`; returns the files. */
export async function photographView(reportJson: string, apiUrl: string, dir: string, name: string): Promise<string[]> {
  const report = JSON.parse(reportJson) as ReportLinks;
  const run = report.tests.find((t) => t.status !== 'passed' && t.viewUrl) ?? report.tests.find((t) => t.viewUrl);
  const pages: [string, string | null | undefined][] = [
    [`${name}-suite`, report.suiteRunUrl],
    [`${name}-run-${run?.status ?? 'none'}`, run?.viewUrl],
  ];
  mkdirSync(dir, { recursive: true });
  const browser = await chromium.launch({ executablePath: CHROMIUM });
  const files: string[] = [];
  try {
    const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    for (const [base, link] of pages) {
      if (!link) continue;
      await page.goto(local(link, apiUrl), { waitUntil: 'networkidle' });
      for (const [suffix, fullPage] of [
        ['', false],
        ['-full', true],
      ] as const) {
        const file = path.join(dir, `${base}${suffix}.png`);
        await page.screenshot({ path: file, fullPage });
        files.push(file);
      }
    }
  } finally {
    await browser.close();
  }
  return files;
}
