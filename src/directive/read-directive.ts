import { closest, didYouMean } from '../errors/did-you-mean.js';
import { ErrorCode } from '../errors/error-codes.js';
import {
  INPUT_TYPES,
  type InputDecl,
  type InputType,
  type OutputDecl,
  type ProcessNode,
} from './ast.js';
import { coerceValue } from './coerce-value.js';
import type { Diagnostics } from './diagnostics.js';
import { attrLoc, ElementReader } from './element-reader.js';
import { readMetadata, readPermissions, type MetadataParts } from './read-metadata.js';
import { readNodes } from './read-process.js';
import { readValue } from './read-value.js';
import { TYPE_ALIASES } from './type-aliases.js';
import { elementsOf, textOf, type XmlElement } from './xml-element.js';

/** What the `<directive>` element yields. */
export interface DirectiveParts extends MetadataParts {
  name: string;
  version: string;
  inputs: InputDecl[];
  outputs: OutputDecl[];
  process: ProcessNode[] | undefined;
  successCriteria: string[];
}

const ROOT_CHILDREN = [
  'metadata',
  'inputs',
  'outputs',
  'process',
  'success_criteria',
  'description',
];
/** Metadata that RYE's older test directives put directly under `<directive>`. */
const LEGACY_ROOT_CHILDREN = ['permissions', 'context', 'steps'];
const SEMVER = /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/;

/** Reads `<directive name version>` and its children. */
export function readDirective(root: XmlElement, diag: Diagnostics): DirectiveParts {
  const kids = elementsOf(root);
  const metadataEl = kids.find((k) => k.tag === 'metadata');
  // Some of RYE's older files write name and version as <metadata> children instead.
  const fromMeta = (tag: string) => {
    const el = metadataEl && elementsOf(metadataEl).find((k) => k.tag === tag);
    return el && textOf(el);
  };
  const required = ['name', 'version'].filter(
    (a) => root.attrs[a] !== undefined || fromMeta(a) === undefined,
  );
  const r = new ElementReader(root, diag, ['name', 'version', 'extends'], required);
  for (const a of ['name', 'version']) {
    if (!required.includes(a))
      diag.warn(
        'METADATA_ATTRIBUTE',
        `<directive> has no ${a} attribute; the <metadata><${a}> element is used.`,
        root.loc,
        `Write <directive ${a}="…">.`,
      );
  }
  const version = r.str('version') ?? fromMeta('version') ?? '';
  if (version !== '' && !SEMVER.test(version)) {
    diag.error(
      ErrorCode.INVALID_VERSION,
      `<directive> version="${version}" is not a semantic version (MAJOR.MINOR.PATCH).`,
      attrLoc(root, 'version'),
      `Write it as three numbers, e.g. version="${semverGuess(version)}".`,
    );
  }
  for (const kid of kids) {
    if (LEGACY_ROOT_CHILDREN.includes(kid.tag)) {
      diag.warn(
        'LEGACY_LAYOUT',
        `<${kid.tag}> belongs inside <metadata>; it is read from here as older RYE files have it.`,
        kid.loc,
      );
    } else if (!ROOT_CHILDREN.includes(kid.tag)) {
      diag.error(
        ErrorCode.UNKNOWN_ELEMENT,
        `<directive> has no element <${kid.tag}>.${didYouMean(kid.tag, ROOT_CHILDREN)}`,
        kid.loc,
        `Allowed: ${ROOT_CHILDREN.join(', ')}.`,
      );
    }
  }
  const find = (tag: string) => kids.find((k) => k.tag === tag);
  const meta = readMetadata(metadataEl, diag);
  const rootPermissions = find('permissions');
  if (meta.permissions === undefined && rootPermissions)
    meta.permissions = readPermissions(rootPermissions, diag);
  const rootContext = find('context');
  if (rootContext) meta.extra.context ??= textOf(rootContext);
  const rootDescription = find('description');
  const processEl = find('process') ?? find('steps');
  const criteria = find('success_criteria');
  return {
    ...meta,
    description: meta.description ?? (rootDescription && textOf(rootDescription)),
    name: r.str('name') ?? fromMeta('name') ?? '',
    version,
    inputs: readInputs(find('inputs'), diag),
    outputs: readOutputs(find('outputs'), diag),
    process: processEl && readNodes(processEl, diag),
    successCriteria: criteria ? readCriteria(criteria) : [],
  };
}

const DEFAULT_HINTS: Record<InputType, string> = {
  string: 'Any text is a string.',
  integer: 'Write a whole number, e.g. default="10", or change the type.',
  number: 'Write a number, e.g. default="2.5", or change the type.',
  boolean: 'Write default="true" or default="false", or change the type.',
  array: 'Write a JSON array, e.g. default=\'["a", "b"]\', or change the type.',
  object: 'Write a JSON object, e.g. default=\'{"key": 1}\', or change the type.',
};

function article(word: string): string {
  return /^[aeiou]/i.test(word) ? 'an' : 'a';
}

/** `1.0` → `1.0.0`, `v1` → `1.0.0`: the version someone most likely meant. */
function semverGuess(version: string): string {
  const parts = (version.replace(/^v/i, '').match(/\d+/g) ?? []).slice(0, 3);
  while (parts.length < 3) parts.push('0');
  return parts.join('.');
}

/** `<success_criteria><criterion>…</criterion></success_criteria>`, kept as text. */
export function readCriteria(el: XmlElement): string[] {
  const kids = elementsOf(el);
  return kids.length === 0 ? [textOf(el)].filter(Boolean) : kids.map(textOf);
}

function readInputs(el: XmlElement | undefined, diag: Diagnostics): InputDecl[] {
  if (el === undefined) return [];
  const inputs: InputDecl[] = [];
  for (const kid of elementsOf(el)) {
    if (kid.tag !== 'input') {
      diag.error(
        ErrorCode.UNKNOWN_ELEMENT,
        `<inputs> holds <input> elements, not <${kid.tag}>.${didYouMean(kid.tag, ['input'])}`,
        kid.loc,
        'Declare each input as <input name="…" type="string" required="true">description</input>.',
      );
      continue;
    }
    const r = new ElementReader(kid, diag, ['name', 'type', 'required', 'default'], ['name']);
    const name = r.str('name') ?? '';
    const type = r.oneOf('type', INPUT_TYPES, 'string', TYPE_ALIASES) as InputType;
    const first = inputs.find((i) => i.name === name);
    if (first !== undefined && name !== '') {
      diag.error(
        ErrorCode.DUPLICATE_INPUT,
        `Input "${name}" is declared twice (first at line ${first.loc.line}).`,
        attrLoc(kid, 'name'),
        'Remove one of the two <input> elements, or rename one.',
      );
    }
    const rawDefault = r.str('default');
    let value: unknown;
    if (
      rawDefault !== undefined &&
      kid.attrs.type !== undefined &&
      !(INPUT_TYPES as readonly string[]).includes(kid.attrs.type)
    ) {
      value = rawDefault; // the type is already reported; checking the default against a guess only adds noise
    } else if (rawDefault !== undefined) {
      const c = coerceValue(rawDefault, type);
      if (c.ok) value = c.value;
      else
        r.invalid(
          'default',
          rawDefault,
          `${article(type)} ${type} (the input's type)`,
          DEFAULT_HINTS[type],
        );
    }
    const description = textOf(kid);
    inputs.push({
      name,
      type,
      required: /^true$/i.test(kid.attrs.required ?? ''),
      optional: /^false$/i.test(kid.attrs.required ?? ''),
      default: value,
      hasDefault: rawDefault !== undefined,
      description: description === '' ? undefined : description,
      loc: kid.loc,
    });
  }
  return inputs;
}

function readOutputs(el: XmlElement | undefined, diag: Diagnostics): OutputDecl[] {
  if (el === undefined) return [];
  const outputs: OutputDecl[] = [];
  for (const kid of elementsOf(el)) {
    if (['success', 'failure', 'result'].includes(kid.tag)) continue; // RYE's documentary messages
    if (kid.tag !== 'output' && closest(kid.tag, ['output']) === undefined) {
      // RYE B also writes outputs as elements named after them: <child_thread_id>desc</child_thread_id>.
      diag.warn(
        'OUTPUT_ELEMENT',
        `<${kid.tag}> in <outputs> is read as <output name="${kid.tag}">.`,
        kid.loc,
        `Write <output name="${kid.tag}">…</output>.`,
      );
      const description = textOf(kid);
      outputs.push({
        name: kid.tag,
        value: undefined,
        description: description === '' ? undefined : description,
        loc: kid.loc,
      });
      continue;
    }
    if (kid.tag !== 'output') {
      diag.error(
        ErrorCode.UNKNOWN_ELEMENT,
        `<outputs> holds <output> elements, not <${kid.tag}>.${didYouMean(kid.tag, ['output'])}`,
        kid.loc,
        'Declare each output as <output name="…" value="${state.…}">description</output> (RYE\'s <success>/<failure> are kept too).',
      );
      continue;
    }
    new ElementReader(kid, diag, ['name', 'value', 'expr', 'type', 'required'], ['name']);
    const description = textOf(kid);
    outputs.push({
      name: kid.attrs.name ?? '',
      value: readValue(kid, diag, false),
      description: description === '' ? undefined : description,
      loc: kid.loc,
    });
  }
  return outputs;
}
