import type { Permission } from '../core/types.js';
import { PERMISSIONS } from './schema.js';

/**
 * Built-in profiles only take capabilities away (the effective set is an intersection);
 * decisions inside what remains come from the rules and the tools' risk defaults.
 */
export const BUILTIN_PROFILES: Record<'readonly' | 'edit' | 'full', readonly Permission[]> = {
  readonly: ['fs.read'],
  edit: ['fs.read', 'fs.write', 'fs.delete'],
  full: PERMISSIONS,
};

export function isBuiltinProfile(name: string): name is keyof typeof BUILTIN_PROFILES {
  return Object.hasOwn(BUILTIN_PROFILES, name);
}
