import { createRequire } from 'node:module';
import type { Node } from 'web-tree-sitter';

/** The reader's result must be plain data: a node read after its tree is freed gives garbage, not an error. */
type Plain<T> = T extends Node ? never : T;

export type { Node as SyntaxNode };

/** A loaded bash grammar; parsing is synchronous once loading is done. */
export interface ShellParser {
  /**
   * `read` gets the tree's root and must take what it needs out of it: the tree lives in the
   * grammar's wasm memory, which nothing collects, and is freed when `read` returns (or throws).
   * Kept, every command leaked ~2.5 KB there for the server's life.
   */
  parse<T>(text: string, read: (root: Node) => Plain<T>): T;
}

// The grammar is loaded once per process and shared: loading the wasm costs ~50 ms, parsing is cheap.
let loading: Promise<ShellParser> | undefined;

async function load(): Promise<ShellParser> {
  const require = createRequire(import.meta.url);
  // Imported here, not at the top: the emscripten glue is large and most sessions never run a command.
  const { Language, Parser, Node: TreeNode } = await import('web-tree-sitter');
  await Parser.init();
  const lang = await Language.load(require.resolve('tree-sitter-bash/tree-sitter-bash.wasm'));
  const parser = new Parser();
  parser.setLanguage(lang);
  return {
    parse<T>(text: string, read: (root: Node) => T): T {
      const tree = parser.parse(text);
      if (!tree) throw new Error('the bash parser returned no tree');
      try {
        const out = read(tree.rootNode);
        // web-tree-sitter does not refuse a freed tree's node: it reads reused wasm memory (an
        // empty walk, another command's text). A reader that hands one out is a bug here.
        if (out instanceof TreeNode) throw new Error('a bash parse reader returned a syntax node; copy out what it says instead');
        return out;
      } finally {
        tree.delete();
      }
    },
  };
}

/** The shared bash parser, loaded lazily on first use. */
export function loadShellParser(): Promise<ShellParser> {
  loading ??= load().catch((e) => { loading = undefined; throw e; });
  return loading;
}
