import { readFile, stat } from 'node:fs/promises';
import { dirname, extname, join, relative, resolve, sep } from 'node:path';
import type { Directive, ProcessNode } from '../directive/ast.js';
import {
  checkDirectiveSize,
  contentHash,
  directiveTooLarge,
  parseDirective,
} from '../directive/parse-directive.js';
import { compileDirective } from '../compiler/compile-directive.js';
import type { CompiledDirective } from '../compiler/compiled-directive.js';
import { readGraph } from '../compiler/read-graph.js';
import { DirigentError, isDirigentError } from '../errors/dirigent-error.js';
import { KIND_EXTENSIONS } from '../items/item-kind.js';
import { checkItemId, ItemResolver } from '../items/item-resolver.js';
import { TrustStore } from '../items/signing/trust-store.js';
import { verifyItemText } from '../items/signing/verify-item.js';
import { defaultSpaces } from '../items/space.js';
import { ErrorCode } from '../errors/error-codes.js';
import type { DirectiveChecks } from '../directive/validate-directive.js';
import {
  loadProjectPolicy,
  signaturesRequiredByEnv,
  type ProjectPolicy,
} from '../policy/project-policy.js';
import { declaredSyntax } from '../values/syntax.js';
import { BUILTIN_TOOLS } from '../tools/builtin/index.js';
import { itemNotFound } from '../errors/item-errors.js';
import { cannotRead } from '../errors/file-errors.js';
import { ignoreMissing } from '../errors/ignore-expected.js';
import type { ProjectFindings } from './project-checks.js';

export type { ProjectFindings } from './project-checks.js';

/** A directive ready to run, with the text it was compiled from. */
export interface LoadedDirective {
  compiled: CompiledDirective;
  file: string;
  text: string;
  /** `category/name` under `.ai/directives/`, or the directive's name. */
  itemId: string;
  /**
   * What its signature check found worth saying (not signed, an untrusted key, text the
   * signature does not cover), when it was loaded through {@link DirectiveLoader.verified}.
   */
  signatureWarnings?: string[];
}

const CACHE_LIMIT = 500;

/** What a directive that executes nothing is found to have against its project. */
const NO_FINDINGS: ProjectFindings = Object.freeze({ errors: [], warnings: [] }) as ProjectFindings;

/**
 * Reads, parses and compiles directives (Markdown) and RYE graphs (YAML). Compiled machines are
 * cached by file and content hash, so a file compiles once however often it runs.
 */
export class DirectiveLoader {
  private readonly cache = new Map<string, CompiledDirective>();
  /** Project checks by file and content hash, as of the spaces' generation they were made at. */
  private readonly findings = new Map<
    string,
    { generation: number; findings: Promise<ProjectFindings> }
  >();

  /** Where item ids resolve: the project's, the user's and the system space. */
  readonly items: ItemResolver;

  private readonly trust: TrustStore;

  /** The project's rules: allowed environment variables, strict mode, size limits. */
  readonly policy: ProjectPolicy;
  /** What validation asks of directives, from {@link policy}. */
  readonly checks: DirectiveChecks;

  /** Whether unsigned directives and directives signed by untrusted keys are refused. */
  readonly requireSignatures: boolean;

  /**
   * @param requireSignatures - refuse unsigned directives and untrusted keys (default: the
   *   project's `require_signatures`, or `$DIRIGENT_REQUIRE_SIGNATURES` is `1` or `true`). A
   *   signed directive whose content changed since it was signed is refused either way.
   * @param policy - the project's rules (default: read from `.ai/config/dirigent.yaml` and the
   *   environment; throws `INVALID_CONFIG` for a malformed file).
   */
  constructor(
    readonly projectDir: string,
    requireSignatures?: boolean,
    policy?: ProjectPolicy,
  ) {
    this.items = new ItemResolver(defaultSpaces(projectDir));
    this.trust = new TrustStore(this.items.spaces);
    this.policy = policy ?? loadProjectPolicy(projectDir);
    this.requireSignatures =
      requireSignatures ?? (this.policy.requireSignatures || signaturesRequiredByEnv());
    this.checks = {
      envAllow: this.policy.envAllow,
      strict: this.policy.strict,
      syntaxOf: (itemId, param) => declaredSyntax(itemId, BUILTIN_SCHEMAS.get(itemId), param),
    };
  }

  /** Parses and compiles `text` as the content of `file` (no I/O). */
  fromText(file: string, text: string): LoadedDirective {
    const key = `${file}\0${contentHash(text)}`;
    let compiled = this.cache.get(key);
    if (compiled === undefined) {
      compiled = compileDirective(this.parse(file, text));
      if (this.cache.size >= CACHE_LIMIT) this.cache.delete(this.cache.keys().next().value!);
      this.cache.set(key, compiled);
    }
    return { compiled, file, text, itemId: itemIdOf(file, compiled.directive) };
  }

  /** Parses a directive (Markdown) or graph (YAML) under the project's policy. */
  private parse(file: string, text: string): Directive {
    const ext = extname(file).toLowerCase();
    if (ext === '.yaml' || ext === '.yml') {
      checkDirectiveSize(text, file, this.policy.limits.directiveBytes);
      return readGraph(text, file, this.checks);
    }
    return parseDirective(text, file, {
      checks: this.checks,
      maxBytes: this.policy.limits.directiveBytes,
    });
  }

  /**
   * What directive `d`, read from `file`, is found to have against the project
   * (`project-checks.ts`): tools and child directives that do not resolve, parameters they do not
   * take. Checked once per file and content and kept while nothing in the spaces changes; never
   * throws for the directive's own problems (they are the answer).
   */
  projectFindings(d: Directive, file: string): Promise<ProjectFindings> {
    if (!executesAny(d.process)) return Promise.resolve(NO_FINDINGS);
    this.items.watchSpaces(); // from now on, a change in a space counts
    const key = `${file}\0${d.source.hash}`;
    const generation = this.items.generation;
    const known = this.findings.get(key);
    if (known !== undefined && known.generation === generation) return known.findings;
    const findings = import('./project-checks.js').then(({ checkProject }) =>
      checkProject(d, file, {
        projectDir: this.projectDir,
        items: this.items,
        resolveDirective: (ref, from) => this.resolve(ref, from),
        readDirective: async (file) => {
          let text: string;
          try {
            text = await readFile(file, 'utf8');
          } catch (err) {
            throw cannotRead(file, err, { what: 'directive file' });
          }
          return this.fromText(file, text).compiled.directive;
        },
      }),
    );
    if (this.findings.size >= CACHE_LIMIT) this.findings.delete(this.findings.keys().next().value!);
    this.findings.set(key, { generation, findings });
    findings.catch(() => this.findings.delete(key));
    return findings;
  }

  /**
   * `loaded`, once {@link projectFindings} finds no error in it: what a run is started with, so
   * that nothing runs for a directive whose tools, child directives or parameters are wrong.
   * Throws one error carrying every finding (`details.diagnostics`), located, as a parse does.
   */
  async checked(loaded: LoadedDirective): Promise<LoadedDirective> {
    const findings = await this.projectFindings(loaded.compiled.directive, loaded.file);
    if (findings.errors.length > 0) {
      const { throwIfErrors } = await import('./project-checks.js');
      throwIfErrors(findings);
    }
    return loaded;
  }

  /** Reads and compiles a file. */
  async loadFile(file: string): Promise<LoadedDirective> {
    let text: string;
    const max = this.policy.limits.directiveBytes;
    // Refused before reading: a huge file costs nothing. A file that is not there is reported
    // by the read below.
    const size = (await stat(file).catch(ignoreMissing))?.size ?? 0;
    if (size > max) throw directiveTooLarge(file, size, max);
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      throw cannotRead(file, err, { what: 'directive file' });
    }
    return this.verified(file, text);
  }

  /** Verifies `text`'s signature as the content of `file` (the project's policy), then compiles it. */
  async verified(file: string, text: string): Promise<LoadedDirective> {
    const space = this.items.spaces.find((s) => file.startsWith(s.root + sep))?.name;
    const { warnings } = await verifyItemText(text, file, 'directive', {
      trust: this.trust,
      requireSignatures: this.requireSignatures,
      ...(space !== undefined && { space }),
    });
    return { ...this.fromText(file, text), signatureWarnings: warnings };
  }

  /**
   * Where the directive `itemId` (extension `ext`) lives in this project: the file of another
   * machine's copy, or of one this project does not hold, mapped to this project's
   * `.ai/directives/`, so that its item id, its child directives and its error locations are this
   * project's.
   */
  fileOf(itemId: string, ext: string): string {
    checkItemId(itemId);
    return join(this.projectDir, '.ai', 'directives', ...itemId.split('/')) + ext;
  }

  /**
   * `file`, as a run stored by another process named it, in this project: a directive under
   * another machine's `.ai/directives/` is this project's (see {@link fileOf}); any other file is
   * kept as it is.
   */
  localFile(file: string, itemId: string): string {
    const home = join(this.projectDir, '.ai', 'directives');
    if (!DIRECTIVES_DIR.test(file) || file.startsWith(home)) return file;
    return this.fileOf(itemId, extname(file));
  }

  /**
   * Finds the file of a directive given as a path or an item id. Item ids resolve in project space
   * (`.ai/directives/`), then user space (`$DIRIGENT_USER_SPACE` or `~/.ai`), then beside
   * `fromFile` (the calling directive).
   */
  async resolve(ref: string, fromFile?: string): Promise<string> {
    // A trigger may name a file; a directive's <execute> names an item id only.
    if (fromFile === undefined && (await isFile(resolve(this.projectDir, ref))))
      return resolve(this.projectDir, ref);
    checkItemId(ref);
    let notFound: DirigentError;
    try {
      return (await this.items.resolve('directive', ref)).file;
    } catch (err) {
      if (!isDirigentError(err, ErrorCode.UNKNOWN_DIRECTIVE)) throw err;
      notFound = err;
    }
    if (fromFile !== undefined) {
      for (const ext of KIND_EXTENSIONS.directive) {
        const beside = join(dirname(fromFile), ref + ext);
        if (await isFile(beside)) return beside;
      }
    }
    throw itemNotFound('directive', ref, {
      in: fromFile ? 'any space, nor beside the directive that calls it' : 'any space',
      hint: `${notFound.hint ?? ''}${fromFile ? ` Also looked beside ${relative(this.projectDir, fromFile) || fromFile}.` : ' Give a file path, or put the directive under .ai/directives/.'}`,
    });
  }
}

/** A path through some project's `.ai/directives/`. */
const DIRECTIVES_DIR = /[\\/]\.ai[\\/]directives[\\/]/;

const BUILTIN_SCHEMAS = new Map<string, object>(
  BUILTIN_TOOLS.map((t) => [t.itemId, t.paramsSchema]),
);

/** Whether `nodes` execute a tool or a child directive anywhere. */
function executesAny(nodes: readonly ProcessNode[]): boolean {
  return nodes.some((n) =>
    n.kind === 'parallel'
      ? n.branches.some((b) => executesAny(b.nodes))
      : n.action.type === 'execute' || n.action.type === 'foreach' || n.compensate !== undefined,
  );
}

function itemIdOf(file: string, d: Directive): string {
  const marker = `${sep}.ai${sep}directives${sep}`;
  const at = file.lastIndexOf(marker);
  if (at !== -1)
    return file
      .slice(at + marker.length)
      .replace(/\.(md|ya?ml)$/, '')
      .split(sep)
      .join('/');
  return d.name;
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}
