import { didYouMean } from '../errors/did-you-mean.js';
import { ErrorCode } from '../errors/error-codes.js';
import { INPUT_TYPES, type InputDecl, type InputType, type OutputDecl, type ProcessNode } from './ast.js';
import { coerceValue } from './coerce-value.js';
import type { Diagnostics } from './diagnostics.js';
import { ElementReader } from './element-reader.js';
import { readMetadata, type MetadataParts } from './read-metadata.js';
import { readNodes } from './read-process.js';
import { readValue } from './read-value.js';
import { elementsOf, textOf, type XmlElement } from './xml-tree.js';

/** What the `<directive>` element yields. */
export interface DirectiveParts extends MetadataParts {
  name: string;
  version: string;
  inputs: InputDecl[];
  outputs: OutputDecl[];
  process: ProcessNode[] | undefined;
  successCriteria: string[];
}

const ROOT_CHILDREN = ['metadata', 'inputs', 'outputs', 'process', 'success_criteria', 'description'];
const SEMVER = /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/;

/** Reads `<directive name version>` and its children. */
export function readDirective(root: XmlElement, diag: Diagnostics): DirectiveParts {
  const r = new ElementReader(root, diag, ['name', 'version', 'extends'], ['name', 'version']);
  const version = r.str('version') ?? '';
  if (version !== '' && !SEMVER.test(version)) {
    diag.error(ErrorCode.INVALID_VERSION, `version="${version}" is not a semantic version.`, root.loc, 'Write it as MAJOR.MINOR.PATCH, e.g. version="1.0.0".');
  }
  const kids = elementsOf(root);
  for (const kid of kids) {
    if (!ROOT_CHILDREN.includes(kid.tag)) {
      diag.error(ErrorCode.UNKNOWN_ELEMENT, `<directive> has no element <${kid.tag}>.${didYouMean(kid.tag, ROOT_CHILDREN)}`, kid.loc, `Allowed: ${ROOT_CHILDREN.join(', ')}.`);
    }
  }
  const find = (tag: string) => kids.find((k) => k.tag === tag);
  const meta = readMetadata(find('metadata'), diag);
  const rootDescription = find('description');
  const processEl = find('process');
  const criteria = find('success_criteria');
  return {
    ...meta,
    description: meta.description ?? (rootDescription && textOf(rootDescription)),
    name: r.str('name') ?? '',
    version,
    inputs: readInputs(find('inputs'), diag),
    outputs: readOutputs(find('outputs'), diag),
    process: processEl && readNodes(processEl, diag),
    successCriteria: criteria ? readCriteria(criteria) : [],
  };
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
      diag.error(ErrorCode.UNKNOWN_ELEMENT, `<inputs> holds <input> elements, not <${kid.tag}>.${didYouMean(kid.tag, ['input'])}`, kid.loc);
      continue;
    }
    const r = new ElementReader(kid, diag, ['name', 'type', 'required', 'default'], ['name']);
    const name = r.str('name') ?? '';
    const type = r.oneOf('type', INPUT_TYPES, 'string') as InputType;
    if (inputs.some((i) => i.name === name)) diag.error(ErrorCode.DUPLICATE_INPUT, `Input "${name}" is declared twice.`, kid.loc);
    const rawDefault = r.str('default');
    let value: unknown;
    if (rawDefault !== undefined) {
      const c = coerceValue(rawDefault, type);
      if (c.ok) value = c.value;
      else r.invalid('default', rawDefault, `a valid ${type}`);
    }
    const description = textOf(kid);
    inputs.push({
      name,
      type,
      required: /^true$/i.test(kid.attrs.required ?? ''),
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
    if (kid.tag !== 'output') {
      diag.error(ErrorCode.UNKNOWN_ELEMENT, `<outputs> holds <output> elements, not <${kid.tag}>.${didYouMean(kid.tag, ['output'])}`, kid.loc);
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
