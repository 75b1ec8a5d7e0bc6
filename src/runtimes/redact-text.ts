/** Hiding secret values in text that leaves a tool (results, error messages, stderr, logs). */

/** The mark a secret value is replaced with. */
export const REDACTED = '***';

/**
 * `text` with every occurrence of each non-empty value of `secrets` (and of its JSON-escaped
 * form) replaced by {@link REDACTED}; longer values first, so that one secret containing another
 * is hidden whole.
 */
export function redactText(text: string, secrets: Iterable<string>): string {
  const forms = new Set<string>();
  for (const value of secrets) {
    if (value.length === 0) continue;
    forms.add(value);
    forms.add(JSON.stringify(value).slice(1, -1));
  }
  let out = text;
  for (const form of [...forms].sort((a, b) => b.length - a.length)) {
    if (form.length > 0 && out.includes(form)) out = out.split(form).join(REDACTED);
  }
  return out;
}
