/**
 * JUnit on both sides of the parity harness: Playwright's own junit reporter (run beside its JSON
 * reporter) and the XML `testrun run --junit` writes for the same suite run. Test cases are matched
 * by suite (spec file), classname and name, and each pair compared on what a CI test tab shows:
 * the verdict (passed, failure, skipped) and the file.
 */
import { readFileSync } from 'node:fs';
import { XMLParser } from 'fast-xml-parser';

/** One `<testcase>` as a CI test tab reads it. */
export interface JunitCase {
  suite: string;
  classname: string;
  name: string;
  file: string | null;
  verdict: 'passed' | 'failure' | 'skipped';
}

interface XmlCase {
  '@_name'?: string;
  '@_classname'?: string;
  '@_file'?: string;
  failure?: unknown;
  error?: unknown;
  skipped?: unknown;
}
interface XmlSuite {
  '@_name'?: string;
  testcase?: XmlCase | XmlCase[];
}

const list = <T>(value: T | T[] | undefined): T[] =>
  value === undefined ? [] : Array.isArray(value) ? value : [value];

/** The test cases of a JUnit file, in its order. */
export function readJunit(file: string): JunitCase[] {
  const parser = new XMLParser({ ignoreAttributes: false, allowBooleanAttributes: true });
  const doc = parser.parse(readFileSync(file, 'utf8')) as { testsuites?: { testsuite?: XmlSuite | XmlSuite[] } };
  return list(doc.testsuites?.testsuite).flatMap((suite) =>
    list(suite.testcase).map((c) => ({
      suite: suite['@_name'] ?? '',
      classname: c['@_classname'] ?? '',
      name: c['@_name'] ?? '',
      file: c['@_file'] ?? null,
      verdict:
        c.failure !== undefined || c.error !== undefined ? 'failure' : c.skipped !== undefined ? 'skipped' : 'passed',
    })),
  );
}

export interface JunitComparison {
  playwright: number;
  testrun: number;
  /** Cases both files hold with the same verdict and file. */
  same: number;
  /** What differs, a line each: a case one side lacks, or a pair that disagrees. */
  differences: string[];
}

const keyOf = (c: JunitCase) => `${c.suite} | ${c.classname} | ${c.name}`;

/** Playwright's cases against the service's, each matched by suite, classname and name. */
export function compareJunit(playwright: readonly JunitCase[], testrun: readonly JunitCase[]): JunitComparison {
  const ours = new Map(testrun.map((c) => [keyOf(c), c]));
  const differences: string[] = [];
  let same = 0;
  for (const theirs of playwright) {
    const key = keyOf(theirs);
    const mine = ours.get(key);
    ours.delete(key);
    if (!mine) differences.push(`only in Playwright's: ${key}`);
    else if (mine.verdict !== theirs.verdict || (theirs.file !== null && mine.file !== theirs.file))
      differences.push(
        `${key}: Playwright's ${theirs.verdict} (file ${theirs.file ?? '-'}), testrun's ${mine.verdict} (file ${mine.file ?? '-'})`,
      );
    else same += 1;
  }
  for (const key of ours.keys()) differences.push(`only in testrun's: ${key}`);
  return { playwright: playwright.length, testrun: testrun.length, same, differences };
}
