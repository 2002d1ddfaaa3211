/** Shapes shared by the two grep engines (ripgrep and the built-in one) and the tool. */

export type OutputMode = 'content' | 'files_with_matches' | 'count';

/** One search, after argument checks: what both engines run. */
export interface Query {
  pattern: string;
  fixed_strings: boolean;
  ignore_case: boolean;
  multiline: boolean;
  /** Lines of context before and after each match (content mode only). */
  context: number;
  mode: OutputMode;
  hidden: boolean;
  /** User globs, `!` for exclusion, matched against paths relative to the search root. */
  globs: string[];
  /** File-name globs of the `type` argument (from TYPE_GLOBS), or [] for none. */
  typeGlobs: string[];
}

/** A match as both engines report it: one line, or the merged lines of a multiline match. */
export interface MatchRecord {
  line: number;
  /** Last line the match covers (equals line unless multiline). */
  end: number;
  text: string;
  before: string[];
  after: string[];
}

/** What an engine found in one file. */
export interface FileHit {
  /** Relative to the search root with `/` separators; '' when the search root is the file itself. */
  rel: string;
  /** Content mode: the match records, in line order. */
  records: MatchRecord[];
  /** Count mode: matching records (lines); files mode: 1. */
  count: number;
}

export type Cap = 'time' | 'visits' | null;

export interface EngineResult {
  hits: FileHit[];
  /** Which cap stopped the search early, if any. */
  capped: Cap;
  /** Files the engine searched, when it knows. */
  searched?: number;
  /** Directory entries the walk looked at (built-in engine). */
  visited?: number;
  /** False when the engine stopped at its collection cap (there are more hits than `hits`). */
  complete: boolean;
  /** True when hits are the first ones in path order (sorted mode): paging over them is exact. */
  sortedPrefix: boolean;
  notes: string[];
}

/**
 * Items (records in content mode, files otherwise) an engine collects in full before it
 * settles for the first ones in path order; up to here totals are exact, in both engines.
 */
export const COLLECT_CAP = { content: 20_000, files_with_matches: 200_000, count: 200_000 } as const;

/** Longest line text returned; longer lines are cut with an ellipsis (both engines). */
export const MAX_LINE_CHARS = 500;
/** ripgrep's read buffer: a NUL inside it marks the file binary, and it is skipped. */
export const BINARY_WINDOW = 64 * 1024;

/**
 * `type` → file-name globs. One table for both engines (ripgrep gets them through
 * --type-add) so `type: "ts"` selects the same files whatever runs the search.
 */
export const TYPE_GLOBS: Record<string, string[]> = {
  ts: ['*.ts', '*.tsx', '*.mts', '*.cts'],
  js: ['*.js', '*.jsx', '*.mjs', '*.cjs'],
  py: ['*.py', '*.pyi'],
  rust: ['*.rs'],
  go: ['*.go'],
  java: ['*.java'],
  kotlin: ['*.kt', '*.kts'],
  scala: ['*.scala', '*.sc'],
  swift: ['*.swift'],
  c: ['*.c', '*.h'],
  cpp: ['*.cpp', '*.cc', '*.cxx', '*.c++', '*.hpp', '*.hh', '*.hxx', '*.h++', '*.h', '*.inl'],
  cs: ['*.cs', '*.csx'],
  rb: ['*.rb', '*.rake', '*.gemspec', 'Gemfile', 'Rakefile'],
  php: ['*.php'],
  sh: ['*.sh', '*.bash', '*.zsh', '*.ksh', '.bashrc', '.zshrc', '.profile', '.bash_profile'],
  lua: ['*.lua'],
  dart: ['*.dart'],
  elixir: ['*.ex', '*.exs'],
  erlang: ['*.erl', '*.hrl'],
  haskell: ['*.hs', '*.lhs'],
  sql: ['*.sql'],
  md: ['*.md', '*.markdown', '*.mdx'],
  rst: ['*.rst'],
  txt: ['*.txt'],
  json: ['*.json', '*.jsonc', '*.json5', '*.jsonl'],
  yaml: ['*.yml', '*.yaml'],
  toml: ['*.toml'],
  xml: ['*.xml', '*.xsd', '*.xsl', '*.svg'],
  html: ['*.html', '*.htm', '*.xhtml'],
  css: ['*.css', '*.scss', '*.sass', '*.less'],
  vue: ['*.vue'],
  svelte: ['*.svelte'],
  proto: ['*.proto'],
  tf: ['*.tf', '*.tfvars'],
  docker: ['Dockerfile', '*.Dockerfile', 'Dockerfile.*'],
  make: ['Makefile', 'makefile', 'GNUmakefile', '*.mk', '*.mak'],
  cmake: ['CMakeLists.txt', '*.cmake'],
  gradle: ['*.gradle', '*.gradle.kts'],
};

/** Other names models use for the same types. */
export const TYPE_ALIASES: Record<string, string> = {
  typescript: 'ts', tsx: 'ts', javascript: 'js', jsx: 'js', python: 'py', rs: 'rust', golang: 'go',
  kt: 'kotlin', 'c++': 'cpp', cxx: 'cpp', csharp: 'cs', ruby: 'rb', shell: 'sh', bash: 'sh', zsh: 'sh',
  markdown: 'md', yml: 'yaml', text: 'txt', htm: 'html', scss: 'css', terraform: 'tf', dockerfile: 'docker',
  makefile: 'make',
};

/** The globs of a type name, or null when the type is unknown. */
export function typeGlobs(name: string): string[] | null {
  const key = name.toLowerCase();
  return TYPE_GLOBS[key] ?? TYPE_GLOBS[TYPE_ALIASES[key] ?? ''] ?? null;
}
