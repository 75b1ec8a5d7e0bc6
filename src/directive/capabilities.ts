/**
 * RYE's capability strings: `rye.<primary>.<item_type>.<item_id with / as .>`, granted by
 * patterns where `*` matches any characters, dots included. Unlike RYE's fnmatch, `X.*` also
 * grants `X` itself (RYE quirk §9.5).
 */

/** The capability needed to execute `itemId` of `itemType`. */
export function requiredCapability(itemType: 'tool' | 'directive', itemId: string): string {
  return `rye.execute.${itemType}.${itemId.replaceAll('/', '.')}`;
}

const compiled = new Map<string, RegExp>();

function patternRegExp(pattern: string): RegExp {
  let re = compiled.get(pattern);
  if (re === undefined) {
    const body = pattern
      .split('*')
      .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*');
    // `body` of `a.b.*` ends in `\\..*`; without those 4 characters it matches `a.b` itself.
    re = new RegExp(pattern.endsWith('.*') ? `^(?:${body}|${body.slice(0, -4)})$` : `^${body}$`);
    compiled.set(pattern, re);
  }
  return re;
}

/** Whether any of `granted` covers `capability`. */
export function isGranted(granted: readonly string[], capability: string): boolean {
  return granted.some((p) => patternRegExp(p).test(capability));
}
