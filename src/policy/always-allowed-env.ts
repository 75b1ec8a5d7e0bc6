/**
 * Variables every directive may read: RYE's own (`{env:USER_SPACE}`, `{env:AI_DIR}` in its system
 * directives' prose), which name folders, never secrets.
 */
export const ALWAYS_ALLOWED_ENV: readonly string[] = ['USER_SPACE', 'AI_DIR'];
