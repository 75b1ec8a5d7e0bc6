/**
 * The options of an `ItemDispatcher`.
 */
import type { InputLimits, ProjectPolicy } from '../policy/project-policy.js';
import type { PrimitiveRegistry } from '../runtimes/primitive-registry.js';
import type { Telemetry, TelemetryOptions } from '../telemetry/telemetry.js';
import type { BuiltinDispatcher } from './builtin-dispatcher.js';

/** Options of an `ItemDispatcher`. */
export interface ItemDispatcherOptions {
  builtins?: BuiltinDispatcher;
  /**
   * Refuse unsigned items and untrusted keys (tampered items are always refused). Default: the
   * project's policy ({@link policy}, else `require_signatures` of the project space's
   * `config/dirigent.yaml`), or `DIRIGENT_REQUIRE_SIGNATURES` is `1` or `true` in {@link env}.
   */
  requireSignatures?: boolean;
  /** The project's policy, when the caller has read it already (its `requireSignatures`). */
  policy?: Pick<ProjectPolicy, 'requireSignatures'>;
  /** Where declared secrets come from besides the environment (default `$DIRIGENT_SECRETS_FILE` or `~/.config/dirigent/secrets.env`). */
  secretsFile?: string;
  /** The environment secrets are read from (default `process.env`). */
  env?: Record<string, string | undefined>;
  /** The primitives (and their warm pools); shared between dispatchers if given. */
  primitives?: PrimitiveRegistry;
  /** How large and deep a tool's result may be (default {@link DEFAULT_LIMITS}). */
  limits?: Pick<InputLimits, 'resultBytes' | 'jsonDepth'>;
  /** Where each call's span and the tools' metrics go (see `tools/traced-dispatch.ts`). */
  telemetry?: Telemetry | TelemetryOptions;
}
