import { createRequire } from 'node:module';
import type { Node } from 'web-tree-sitter';

export type { Node as SyntaxNode };

/** A loaded bash grammar; parse() is synchronous once loading is done. */
export interface ShellParser {
  parse(text: string): Node;
}

// The grammar is loaded once per process and shared: loading the wasm costs ~50 ms, parsing is cheap.
let loading: Promise<ShellParser> | undefined;

async function load(): Promise<ShellParser> {
  const require = createRequire(import.meta.url);
  // Imported here, not at the top: the emscripten glue is large and most sessions never run a command.
  const { Language, Parser } = await import('web-tree-sitter');
  await Parser.init();
  const lang = await Language.load(require.resolve('tree-sitter-bash/tree-sitter-bash.wasm'));
  const parser = new Parser();
  parser.setLanguage(lang);
  return {
    parse(text: string): Node {
      const tree = parser.parse(text);
      if (!tree) throw new Error('the bash parser returned no tree');
      return tree.rootNode;
    },
  };
}

/** The shared bash parser, loaded lazily on first use. */
export function loadShellParser(): Promise<ShellParser> {
  loading ??= load().catch((e) => { loading = undefined; throw e; });
  return loading;
}
