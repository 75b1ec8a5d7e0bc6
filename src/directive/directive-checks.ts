import { declaredSyntax, type Syntax } from '../values/syntax.js';
import { ALWAYS_ALLOWED_ENV } from '../policy/always-allowed-env.js';

/** What a project asks of its directives beyond their own consistency (see `policy/`). */
export interface DirectiveChecks {
  /** Environment variables `{env:…}` may read besides the directive's `<secrets>`. */
  envAllow: ReadonlySet<string>;
  /** Values that become code are errors rather than warnings. */
  strict: boolean;
  /** The language of a tool's parameter (a shell command, a URL), if the tool declares one. */
  syntaxOf(itemId: string, param: string): Syntax | undefined;
}

/** Checks for a project without configuration: RYE's folder variables only, not strict. */
export const DEFAULT_CHECKS: DirectiveChecks = {
  envAllow: new Set(ALWAYS_ALLOWED_ENV),
  strict: false,
  syntaxOf: (itemId, param) => declaredSyntax(itemId, undefined, param),
};
