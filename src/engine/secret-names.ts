const secretSets = new WeakMap<object, ReadonlySet<string>>();

/**
 * The secrets a directive declares, as a set made once per directive (every tool call asks:
 * its parameters leave their values to the dispatcher).
 */
export function secretNames(directive: { secrets: readonly string[] }): ReadonlySet<string> {
  let set = secretSets.get(directive);
  if (set === undefined) secretSets.set(directive, (set = new Set(directive.secrets)));
  return set;
}
