/**
 * A JUnit file as CI systems read it, for comparing `testrun run --junit` with Playwright's own junit
 * reporter (docs/CLI.md, "How CI systems read the JUnit"). The XML is parsed by junit2json (xml2js,
 * the XML library dorny/test-reporter parses with, called with its default options as dorny's is);
 * what each system derives from it follows their parsers' documented rules, written here from
 * reading them:
 *
 * - GitLab (lib/gitlab/ci/parsers/test/junit.rb): a test case's status is `failed` with a
 *   `<failure>`, else `error` with an `<error>`, else `skipped` with a `<skipped>`, else `success`;
 *   its suite is the enclosing `<testsuite>`'s name; `name`, `classname`, `file` and `time` are its
 *   attributes; the text of a failure (or error) is the element's; a failed test's attachment is the first
 *   `[[ATTACHMENT|…]]` of its `<system-out>`.
 * - dorny/test-reporter (java-junit): `failed` with a `<failure>` or an `<error>`, `skipped` with a
 *   `<skipped>`, else `success`; the name trimmed; a test's group is its `classname`, none when it is
 *   its suite's name; the time `parseFloat(time)`; the error's details the text of the first
 *   `<failure>` (else `<error>`) and its message that element's `message`.
 */
import { XMLParser } from 'fast-xml-parser';
import { parse, type TestCase, type TestSuite } from 'junit2json';

export type ReadCase = {
  suite: string;
  name: string;
  classname: string;
  file: string | undefined;
  time: number;
  gitlab: {
    status: 'failed' | 'error' | 'skipped' | 'success';
    failure: string | undefined;
    attachment: string | null;
  };
  dorny: {
    status: 'failed' | 'skipped' | 'success';
    group: string;
    details: string | undefined;
    message: string | undefined;
  };
  systemOut: string;
};

const ATTACHMENT = /\[\[ATTACHMENT\|(.+?)\]\]/;

function gitlabStatus(c: TestCase): ReadCase['gitlab']['status'] {
  if (c.failure) return 'failed';
  if (c.error) return 'error';
  if (c.skipped) return 'skipped';
  return 'success';
}

function readCase(suite: TestSuite, c: TestCase & { file?: string }): ReadCase {
  const suiteName = (suite.name ?? '').trim();
  const classname = c.classname ?? '';
  const systemOut = (c['system-out'] ?? []).join('');
  const first = (c.failure ?? c.error)?.[0];
  const status = gitlabStatus(c);
  return {
    suite: suiteName,
    name: (c.name ?? '').trim(),
    classname,
    file: c.file,
    time: parseFloat(String(c.time)),
    gitlab: {
      status,
      failure: first?.inner,
      attachment: status === 'failed' ? (ATTACHMENT.exec(systemOut)?.[1] ?? null) : null,
    },
    dorny: {
      status: c.failure || c.error ? 'failed' : c.skipped ? 'skipped' : 'success',
      group: classname === suiteName ? '' : classname,
      details: first?.inner,
      message: first?.message,
    },
    systemOut,
  };
}

/** Every test case of a JUnit file (root `<testsuites>`, as dorny's jest-junit reader requires). */
export async function readJunit(xml: string): Promise<{ tests: number; cases: ReadCase[] }> {
  const root = await parse(xml, {});
  if (!root || !('testsuite' in root)) throw new Error('no <testsuites> root with <testsuite> children');
  const cases = (root.testsuite ?? []).flatMap((suite) => (suite.testcase ?? []).map((c) => readCase(suite, c)));
  return { tests: Number(root.tests), cases };
}

/** The `Error:`, `Expected:` and `Received:` lines of a failure's text, trimmed: the error as both reporters print it. */
export function errorLines(text: string | undefined): string[] {
  return (text ?? '')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => /^(Error|Expected|Received):/.test(line));
}

/** The `[[ATTACHMENT|…]]` lines of a `<system-out>`, each on a line of its own as Playwright writes them. */
export function attachmentLines(systemOut: string): string[] {
  return systemOut
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => /^\[\[ATTACHMENT\|.+\]\]$/.test(line));
}

type Ordered = Record<string, unknown> & { ':@'?: Record<string, string> };

const tagOf = (node: Ordered): string => Object.keys(node).find((k) => k !== ':@') ?? '';
const childrenOf = (node: Ordered): Ordered[] => (node[tagOf(node)] as Ordered[] | undefined) ?? [];
const elementsOf = (node: Ordered): Ordered[] => childrenOf(node).filter((c) => tagOf(c) !== '#text');

/** A test case's children in the order Surefire's schema declares them, with how many of each it allows. */
const CASE_CHILDREN: [string, number][] = [
  ['failure', Infinity],
  ['rerunFailure', Infinity],
  ['flakyFailure', Infinity],
  ['skipped', 1],
  ['error', 1],
  ['rerunError', Infinity],
  ['flakyError', Infinity],
  ['system-out', 1],
  ['system-err', 1],
];
const RETRY_ELEMENTS = new Set(['rerunFailure', 'rerunError', 'flakyFailure', 'flakyError']);
/** Seconds as Surefire's schema has them: digits, at most three decimals. */
const SECONDS = /^\d*(\.\d{0,3})?$/;

function attributeProblems(
  where: string,
  attrs: Record<string, string>,
  required: string[],
  declared: string[],
): string[] {
  return [
    ...required.filter((name) => attrs[name] === undefined).map((name) => `${where}@${name} missing`),
    ...Object.keys(attrs)
      .filter((name) => !declared.includes(name))
      .map((name) => `${where}@${name} undeclared`),
    ...(attrs.time !== undefined && !SECONDS.test(attrs.time) ? [`${where}@time not seconds`] : []),
  ];
}

function caseProblems(testcase: Ordered): string[] {
  const problems = attributeProblems(
    'testcase',
    testcase[':@'] ?? {},
    ['name', 'time'],
    ['name', 'classname', 'group', 'time'],
  );
  let position = 0;
  const seen = new Map<string, number>();
  for (const child of elementsOf(testcase)) {
    const tag = tagOf(child);
    const at = CASE_CHILDREN.findIndex(([name]) => name === tag);
    if (at === -1) problems.push(`testcase>${tag} undeclared`);
    else if (at < position) problems.push(`testcase>${tag} out of order`);
    else position = at;
    seen.set(tag, (seen.get(tag) ?? 0) + 1);
    if ((seen.get(tag) ?? 0) > (CASE_CHILDREN[at]?.[1] ?? Infinity)) problems.push(`testcase>${tag} repeated`);
    if (['failure', 'error', ...RETRY_ELEMENTS].includes(tag) && child[':@']?.type === undefined)
      problems.push(`${tag}@type missing`);
    if (RETRY_ELEMENTS.has(tag) && !elementsOf(child).some((c) => tagOf(c) === 'stackTrace'))
      problems.push(`${tag}>stackTrace missing`);
  }
  return problems;
}

/**
 * What Maven Surefire's report schema (surefire-test-report-3.0.xsd, read, not copied) would refuse
 * in each `<testsuite>` of a file (the schema's root is one `<testsuite>`), as a sorted set:
 * required attributes missing, attributes it does not declare, times that are not seconds with at
 * most three decimals, test case children out of its order or repeated, `type` and `<stackTrace>`
 * missing where it requires them.
 */
export function surefireProblems(xml: string): string[] {
  const parser = new XMLParser({ preserveOrder: true, ignoreAttributes: false, attributeNamePrefix: '' });
  const root = (parser.parse(xml) as Ordered[]).find((n) => tagOf(n) === 'testsuites');
  const problems = new Set<string>();
  for (const suite of root ? elementsOf(root) : []) {
    const suiteAttrs = ['name', 'tests', 'errors', 'skipped', 'failures'];
    const declared = [...suiteAttrs, 'time', 'group', 'version'];
    for (const p of attributeProblems('testsuite', suite[':@'] ?? {}, suiteAttrs, declared)) problems.add(p);
    for (const child of elementsOf(suite)) {
      const tag = tagOf(child);
      if (tag === 'testcase') for (const p of caseProblems(child)) problems.add(p);
      else if (tag !== 'properties') problems.add(`testsuite>${tag} undeclared`);
    }
  }
  return [...problems].sort();
}
