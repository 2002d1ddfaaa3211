import { lstatSync } from 'node:fs';

/**
 * Whether each folder on the way from `base` to a relative folder is still a real folder (not a
 * link, not gone) right now: one lstat per folder, remembered for the call. What an external
 * lister (ripgrep) reported is re-checked with this before it is returned, so a folder swapped for
 * a link while it ran brings in nothing from the link's target.
 */
export function realFolders(base: string): (rel: string) => boolean {
  const seen = new Map<string, boolean>([['', true]]);
  const isReal = (rel: string): boolean => {
    let ok = seen.get(rel);
    if (ok === undefined) {
      const slash = rel.lastIndexOf('/');
      ok = isReal(slash < 0 ? '' : rel.slice(0, slash)) && !!lstatSync(`${base}/${rel}`, { throwIfNoEntry: false })?.isDirectory();
      seen.set(rel, ok);
    }
    return ok;
  };
  return isReal;
}
