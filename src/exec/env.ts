import picomatch from 'picomatch';

/** Passed through from the server's environment when set (SPEC §5: a minimal allow-list). */
export const BASE_ENV_ALLOW = ['PATH', 'HOME', 'LANG', 'LANGUAGE', 'LC_*', 'TERM', 'TZ', 'USER', 'LOGNAME', 'SHELL', 'TMPDIR', 'COLORTERM', 'NO_COLOR'];

/** Never passed, whatever the policy says. */
const SECRET = /(_TOKEN|_SECRET|_KEY)$|PASSWORD|^AWS_/i;

export function isSecretName(name: string): boolean {
  return SECRET.test(name);
}

/**
 * The environment a command gets: the allow-list (plus policy env.allow, globs allowed),
 * then policy env.set; secret-looking names are dropped from both.
 */
export function buildEnv(source: NodeJS.ProcessEnv, policyEnv: { allow: string[]; set: Record<string, string> }): Record<string, string> {
  const allowed = picomatch([...BASE_ENV_ALLOW, ...policyEnv.allow]);
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(source)) {
    if (v !== undefined && allowed(k) && !isSecretName(k)) env[k] = v;
  }
  for (const [k, v] of Object.entries(policyEnv.set)) if (!isSecretName(k)) env[k] = v;
  env.PATH ??= '/usr/local/bin:/usr/bin:/bin';
  return env;
}
