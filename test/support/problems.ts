// The one assertion of an RFC 9457 problem answer, for answers read through supertest and for raw
// bytes read off a socket: the status, the media type, and a body that is the contract's problem
// document of that code (type, title, status) and leaks no stack, SQL or ORM text.
import { compileValidator, Problem, PROBLEMS, problemType, type ProblemCode } from '@testrun/contracts';

const validateProblem = compileValidator(Problem);

/** An HTTP answer as a test holds it: supertest's response, or one parsed from raw bytes. */
type Answer = { status: number; headers: Record<string, unknown>; body: unknown };

/** Asserts `res` is the problem `code` (status, media type, body) and returns the problem document. */
export function expectProblem(res: Answer, code: ProblemCode): Problem {
  expect(res.status).toBe(PROBLEMS[code].status);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  const result = validateProblem(res.body);
  if (!result.ok) throw new Error(`not a problem document: ${JSON.stringify(res.body)}`);
  const problem = result.value;
  expect(problem).toMatchObject({ code, type: problemType(code), title: PROBLEMS[code].title, status: res.status });
  expect(JSON.stringify(problem)).not.toMatch(/at .*\.ts:\d+|SELECT|INSERT|prisma/i);
  return problem;
}

/** A raw HTTP/1.1 answer: its status, its header block as text and its body as text. */
export type RawAnswer = { status: number; headers: string; body: string };

/** {@link expectProblem} for an answer read off a socket, whose headers and body are still text. */
export function expectRawProblem(answer: RawAnswer, code: ProblemCode): Problem {
  const type = /\r\ncontent-type: ([^\r]*)/i.exec(`\r\n${answer.headers}`)?.[1];
  let body: unknown;
  try {
    body = JSON.parse(answer.body);
  } catch {
    throw new Error(`a ${answer.status} whose body is not JSON: ${answer.body.slice(0, 200)}`);
  }
  return expectProblem({ status: answer.status, headers: { 'content-type': type }, body }, code);
}
