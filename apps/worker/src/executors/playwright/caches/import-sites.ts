import { parse, type Node } from 'acorn';

/**
 * Where a large CommonJS module of the service's Playwright calls `import()`, for its code cache
 * (inside/code-cache.ts): Node 20's V8 loses a script's dynamic import callback when the script is
 * compiled from a code cache, so the hook compiles such a module with each `import` keyword of a
 * dynamic import renamed to a function of the same length that imports for it. Runs in the process
 * that makes the cache, outside any sandbox, never in one.
 */

/**
 * A string that reads like code calling import() with an argument (not a message about `import()`);
 * in a template's text, also one that ends at `import(` (an expression of the template follows).
 */
const IMPORT_CALL_TEXT = /\bimport\s*\(\s*[^\s).]/;
const IMPORT_CALL_TEMPLATE_TEXT = /\bimport\s*\(\s*([^\s).]|$)/;

/** A callee that compiles a string as code: eval, the Function constructor, a `.constructor` call. */
function compilesCode(callee: Node): boolean {
  if (callee.type === 'Identifier') return ['eval', 'Function'].includes((callee as Node & { name: string }).name);
  if (callee.type !== 'MemberExpression') return false;
  const member = callee as Node & { computed: boolean; property: Node & { name?: string; value?: unknown } };
  const name = member.computed ? member.property.value : member.property.name;
  return typeof name === 'string' && ['eval', 'Function', 'constructor'].includes(name);
}

/** Every node of `root`'s tree, without recursion (a bundle's tree is deep). */
function* nodesOf(root: Node): Generator<Node> {
  const stack: Node[] = [root];
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    yield node;
    for (const value of Object.values(node) as unknown[]) {
      const children = Array.isArray(value) ? (value as unknown[]) : [value];
      for (const child of children)
        if (typeof child === 'object' && child !== null && typeof (child as Node).type === 'string')
          stack.push(child as Node);
    }
  }
}

/**
 * The offsets of the `import` keywords of `content`'s dynamic imports, in order; null when the
 * module cannot be compiled from a cache with its imports kept: it does not parse as a CommonJS
 * script, or it may compile code calling import() at run time (a string that reads like such a call
 * and a call of eval, Function or a `.constructor`: code compiled so inherits the lost callback).
 */
export function importSites(content: string): number[] | null {
  let tree: Node;
  try {
    tree = parse(content, {
      ecmaVersion: 'latest',
      sourceType: 'script',
      allowReturnOutsideFunction: true,
      allowHashBang: true,
    });
  } catch {
    return null;
  }
  const sites: number[] = [];
  let importText = false;
  let compiles = false;
  for (const node of nodesOf(tree)) {
    if (node.type === 'ImportExpression') sites.push(node.start);
    else if (node.type === 'CallExpression' || node.type === 'NewExpression')
      compiles ||= compilesCode((node as Node & { callee: Node }).callee);
    else if (node.type === 'Literal') {
      const value = (node as Node & { value: unknown }).value;
      importText ||= typeof value === 'string' && IMPORT_CALL_TEXT.test(value);
    } else if (node.type === 'TemplateElement')
      importText ||= IMPORT_CALL_TEMPLATE_TEXT.test(content.slice(node.start, node.end));
  }
  if (importText && compiles) return null;
  return sites.sort((a, b) => a - b);
}
