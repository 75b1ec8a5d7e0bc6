import { hash } from 'node:crypto';
import { basename, extname } from 'node:path';
import { didYouMean } from '../errors/did-you-mean.js';
import { DirigentError } from '../errors/dirigent-error.js';
import { ErrorCode } from '../errors/error-codes.js';
import type { Diagnostic, Directive, ProcessNode } from './ast.js';
import { Diagnostics } from './diagnostics.js';
import { LineIndex } from './line-index.js';
import { readCriteria, readDirective } from './read-directive.js';
import { readNodes } from './read-process.js';
import { frontMatterOf, readFrontMatterDirective } from './read-frontmatter.js';
import { splitMarkdown } from './split-markdown.js';
import { DEFAULT_CHECKS, validateDirective, type DirectiveChecks } from './validate-directive.js';
import { elementsOf, type XmlElement } from './xml-element.js';
import { parseXmlFragment } from './xml-tree.js';
import { checkRunSettings } from './run-settings.js';

/** SHA-256 of a file's text, hex: the key of the compile cache and of stored runs. */
export function contentHash(text: string): string {
  return hash('sha256', text, 'hex'); // one call, no Hash object: a quarter faster on a directive
}

/** What a project asks of the directives it reads. */
export interface ParseOptions {
  /** The project's checks (allowed environment variables, strict mode, tools' languages). */
  checks?: DirectiveChecks;
  /** The largest directive file read, in bytes (default 1 MiB). */
  maxBytes?: number;
}

/** The default {@link ParseOptions.maxBytes}. */
export const MAX_DIRECTIVE_BYTES = 1024 * 1024;

/**
 * Parses and validates a directive file (XML in Markdown, RYE's layout). Pure: the caller reads
 * the file. Throws a `DirigentError` whose `details.diagnostics` lists every error found, each
 * with file, line and column; warnings are returned on the directive.
 */
export function parseDirective(text: string, file: string, options: ParseOptions = {}): Directive {
  try {
    checkDirectiveSize(text, file, options.maxBytes);
    return parse(text, file, options.checks ?? DEFAULT_CHECKS);
  } catch (err) {
    throw withDiagnostics(err);
  }
}

/** Throws `DIRECTIVE_TOO_LARGE` when `text` is larger than `maxBytes` (default 1 MiB). */
export function checkDirectiveSize(
  text: string,
  file: string,
  maxBytes = MAX_DIRECTIVE_BYTES,
): void {
  // A UTF-16 length below the limit / 3 cannot encode to more bytes than it: most texts skip the count.
  if (text.length * 3 <= maxBytes) return;
  const bytes = Buffer.byteLength(text);
  if (bytes > maxBytes) throw directiveTooLarge(file, bytes, maxBytes);
}

/** The `DIRECTIVE_TOO_LARGE` error of a file of `bytes` bytes. */
export function directiveTooLarge(file: string, bytes: number, maxBytes: number): DirigentError {
  return DirigentError.fatal(
    ErrorCode.DIRECTIVE_TOO_LARGE,
    `${file} is ${bytes} bytes; directives are read up to ${maxBytes} bytes.`,
    {
      location: { file, line: 1, column: 1 },
      hint: 'Split it into child directives, or raise limits.directive_bytes in .ai/config/dirigent.yaml.',
    },
  );
}

/**
 * Errors that stop reading at once (no fence, broken XML, no `<directive>`) carry themselves as
 * the one diagnostic, so that every parse error has `details.diagnostics`.
 */
function withDiagnostics(err: unknown): unknown {
  if (!(err instanceof DirigentError) || Array.isArray(err.details?.diagnostics)) return err;
  const d: Diagnostic = {
    severity: 'error',
    code: err.code,
    message: err.message,
    loc: err.location,
    hint: err.hint,
  };
  return new DirigentError(err.code, err.message, {
    retryable: err.retryable,
    ...(err.location && { location: err.location }),
    ...(err.hint && { hint: err.hint }),
    details: { ...err.details, diagnostics: [d] },
    cause: err,
  });
}

function parse(text: string, file: string, checks: DirectiveChecks): Directive {
  if (frontMatterOf(text) !== undefined) {
    const d = readFrontMatterDirective(text, file, contentHash(text));
    const diag = new Diagnostics();
    validateDirective(d, diag, checks);
    return finish(d, diag);
  }
  const diag = new Diagnostics();
  const lines = new LineIndex(file, text);
  const parts = splitMarkdown(text, lines);
  if (parts.xml.trim() === '') {
    throw DirigentError.fatal(
      ErrorCode.NOT_A_DIRECTIVE,
      'The ```xml block is empty; it must hold the <directive> element.',
      {
        location: lines.at(parts.xmlOffset),
        hint: 'Write <directive name="…" version="1.0.0">…</directive> between the fence lines.',
      },
    );
  }
  const fence = parseXmlFragment(parts.xml, parts.xmlOffset, lines, false).nodes;
  const roots = fence.filter((n): n is XmlElement => typeof n !== 'string');
  const root = roots[0];
  if (root === undefined || root.tag !== 'directive' || roots.length > 1) {
    throw DirigentError.fatal(
      ErrorCode.NOT_A_DIRECTIVE,
      root === undefined || root.tag !== 'directive'
        ? `The xml block must hold one <directive> element${root ? `, not <${root.tag}>.${didYouMean(root.tag, ['directive'])}` : '.'}`
        : `The xml block holds <${roots[1]!.tag}> after </directive>; put everything inside <directive>.`,
      {
        location:
          (roots[root?.tag === 'directive' ? 1 : 0] ?? root)?.loc ?? lines.at(parts.xmlOffset),
        hint: 'Write <directive name="…" version="1.0.0">…</directive>.',
      },
    );
  }
  const d = readDirective(root, diag);
  let process = d.process;
  let successCriteria = d.successCriteria;
  if (/<[A-Za-z]/.test(parts.body)) {
    const body = parseXmlFragment(parts.body, parts.bodyOffset, lines, true);
    for (const r of body.repairs)
      diag.warn('LENIENT_XML', r.message, r.loc, 'Write < and & in prose as &lt; and &amp;.');
    const tops = body.nodes.filter((n): n is XmlElement => typeof n !== 'string');
    const bodyProcess = findDeep(tops, 'process');
    if (bodyProcess && process) {
      diag.warn(
        'TWO_PROCESSES',
        'There is a <process> inside the fence and one after it; the one inside is used.',
        bodyProcess.loc,
      );
    } else if (bodyProcess) {
      process = readNodes(bodyProcess, diag);
    }
    const criteria = findDeep(tops, 'success_criteria');
    if (criteria && successCriteria.length === 0) successCriteria = readCriteria(criteria);
  }
  const stem = basename(file, extname(file));
  if (d.name !== '' && d.name !== stem && file !== '<inline>') {
    diag.warn(
      'NAME_MISMATCH',
      `The directive is named "${d.name}" but its file is "${basename(file)}".`,
      root.loc,
      `Rename one so that name="${stem}".`,
    );
  }
  if (process === undefined || process.length === 0) {
    diag.warn(
      ErrorCode.EMPTY_PROCESS,
      'The directive has no steps; running it completes at once.',
      root.loc,
    );
  }
  const directive: Directive = {
    name: d.name,
    version: d.version,
    title: parts.title,
    preamble: parts.preamble,
    description: d.description,
    category: d.category,
    author: d.author,
    limits: d.limits,
    permissions: d.permissions,
    inputs: d.inputs,
    outputs: d.outputs,
    secrets: d.secrets,
    schedules: d.schedules,
    events: d.events,
    runSettings: d.runSettings,
    returnsState: false,
    process: process ?? ([] as ProcessNode[]),
    initialState: {},
    metadata: d.extra,
    successCriteria,
    valueChecks: [],
    signature: parts.signature,
    source: { file, hash: contentHash(text), format: 'directive' },
    warnings: diag.warnings,
  };
  validateDirective(directive, diag, checks);
  checkRunSettings(directive.runSettings, directive.inputs, diag);
  return finish(directive, diag);
}

/** Directives read whole but found wrong, by the error that refused them. */
const partials = new WeakMap<DirigentError, Directive>();

/** `d`, unless `diag` holds errors: then one error with every one (see {@link partialDirectiveOf}). */
function finish(d: Directive, diag: Diagnostics): Directive {
  try {
    diag.throwIfErrors();
  } catch (err) {
    partials.set(err as DirigentError, d);
    throw err;
  }
  return d;
}

/**
 * The directive `err` refused, when {@link parseDirective} read all of it and found it wrong
 * (an unknown path, a bad attribute), so that what else is wrong with it (its tools, against the
 * project) can be told in the same answer. Undefined when reading stopped early (no fence,
 * broken XML). Never to be run.
 */
export function partialDirectiveOf(err: unknown): Directive | undefined {
  return err instanceof DirigentError ? partials.get(err) : undefined;
}

/** The first element named `tag` among `nodes` or their descendants, document order. */
function findDeep(nodes: XmlElement[], tag: string): XmlElement | undefined {
  for (const n of nodes) {
    if (n.tag === tag) return n;
    const inner = findDeep(elementsOf(n), tag);
    if (inner) return inner;
  }
  return undefined;
}
