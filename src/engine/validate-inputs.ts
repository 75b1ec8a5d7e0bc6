import type { Directive, InputType } from '../directive/ast.js';
import { coerceValue } from '../directive/coerce-value.js';
import { requiredAtStart, type InputUse } from '../directive/input-uses.js';
import { DirigentError } from '../errors/dirigent-error.js';
import { formatLocation, type SourceLocation } from '../errors/source-location.js';
import { ErrorCode } from '../errors/error-codes.js';
import { checkJsonSize } from '../policy/check-json-size.js';
import { DEFAULT_LIMITS, type InputLimits } from '../policy/project-policy.js';
import { lookupPath, MISSING } from '../expr/path.js';
import { stringifyValue } from '../expr/template.js';
import { checkNeeds } from '../values/value-shape.js';
import { schemaValidator, type ErrorObject, type ValidateFunction } from './schema-validator.js';

const validators = new WeakMap<Directive, ValidateFunction>();
const strictUses = new WeakMap<Directive, readonly InputUse[]>();

/**
 * The places the process of `d` reads an optional input without a default and without `?`
 * (`directive/input-uses.ts`): such an input is required at start. Found once per directive.
 */
function usesOf(d: Directive): readonly InputUse[] {
  let uses = strictUses.get(d);
  if (uses === undefined) {
    uses = requiredAtStart(d);
    strictUses.set(d, uses);
  }
  return uses;
}

function validatorOf(d: Directive): ValidateFunction {
  let v = validators.get(d);
  if (v === undefined) {
    const properties = Object.fromEntries(d.inputs.map((i) => [i.name, { type: i.type }]));
    v = schemaValidator({
      type: 'object',
      properties,
      required: d.inputs.filter((i) => i.required && !i.hasDefault).map((i) => i.name),
      additionalProperties: d.inputs.length === 0 && d.source.format === 'graph',
    });
    validators.set(d, v);
  }
  return v;
}

/**
 * Coerces string values to their declared types, applies defaults and validates the inputs of a
 * run with ajv. Every problem (unknown input, missing required one, wrong type) is reported in
 * one `INVALID_INPUTS` error; inputs larger or deeper than `limits` are `INPUT_TOO_LARGE`. An
 * input without a default that the process reads without `?` or a default is required even when
 * it is not marked `required`: missing, it is reported with the place that reads it, so that a
 * run that would fail there for want of it never starts.
 */
export function validateInputs(
  d: Directive,
  given: Record<string, unknown>,
  limits: Pick<InputLimits, 'inputsBytes' | 'jsonDepth'> = DEFAULT_LIMITS,
): Record<string, unknown> {
  checkJsonSize(
    given,
    { maxBytes: limits.inputsBytes, maxDepth: limits.jsonDepth },
    { what: 'The inputs', code: ErrorCode.INPUT_TOO_LARGE, setting: 'limits.inputs_bytes' },
  );
  const problems: string[] = [];
  const bad = new Set<string>();
  const inputs: Record<string, unknown> = {};
  for (const [name, raw] of Object.entries(given)) {
    const decl = d.inputs.find((i) => i.name === name);
    const c = decl === undefined ? { ok: true as const, value: raw } : coerceValue(raw, decl.type);
    if (c.ok) inputs[name] = c.value;
    else {
      // Kept as given, so ajv does not also call it missing; its ajv errors are dropped below.
      inputs[name] = raw;
      bad.add(name);
      problems.push(
        `input "${name}" must be ${article(decl!.type)} ${decl!.type}, got ${JSON.stringify(raw)}`,
      );
    }
  }
  for (const decl of d.inputs)
    if (!(decl.name in inputs) && decl.hasDefault)
      inputs[decl.name] = structuredClone(decl.default);
  // Inputs that surely match their declarations need no ajv (nor loading it); others are checked
  // by ajv, which says what is wrong.
  const validate = plainlyValid(d, inputs) ? undefined : validatorOf(d);
  if (validate !== undefined && !validate(inputs)) {
    for (const e of validate.errors ?? [])
      if (!bad.has(e.instancePath.split('/')[1] ?? '')) problems.push(describe(e, d));
  }
  const usedAt = missingUses(d, inputs);
  for (const use of usedAt) problems.push(describeUse(use));
  if (problems.length > 0) {
    const declared =
      d.inputs.map((i) => `${i.name} (${i.type}${i.required ? ', required' : ''})`).join(', ') ||
      'none';
    const firstBad = d.inputs.find((i) => bad.has(i.name));
    const location: SourceLocation | undefined = firstBad?.loc ?? usedAt[0]?.loc;
    const orDefault =
      usedAt.length > 0
        ? ` An input the process reads without a default is required: give it, give it a default (<input name="${usedAt[0]!.input}" default="…">), or read it as {input:${usedAt[0]!.input}?} where it may be missing.`
        : '';
    throw DirigentError.fatal(
      ErrorCode.INVALID_INPUTS,
      `Invalid inputs for directive "${d.name}": ${[...new Set(problems)].join('; ')}.`,
      {
        hint: `Declared inputs: ${declared}. Give each by name, as its declared type (on the command line: --input name=value).${orDefault}`,
        details: { problems },
        ...(location && { location }),
      },
    );
  }
  checkInputValues(d, inputs, given);
  return inputs;
}

/** The first place the process reads each input that `inputs` lack and it reads with no fallback. */
function missingUses(d: Directive, inputs: Record<string, unknown>): InputUse[] {
  const uses = usesOf(d);
  if (uses.length === 0) return [];
  const first = new Map<string, InputUse>();
  for (const use of uses)
    if (inputs[use.input] === undefined && !first.has(use.input)) first.set(use.input, use);
  return [...first.values()];
}

function describeUse(use: InputUse): string {
  const where = use.step === undefined ? 'an output' : `step "${use.step}"`;
  return `missing input "${use.input}", which ${where} reads as ${use.raw} at ${formatLocation(use.loc)} with no default`;
}

/**
 * Refuses (`UNSAFE_VALUE`, fatal, naming where it stands) an input the caller gave that stands
 * in a shell command where its value must have a shape it does not have (`Directive.valueChecks`):
 * the run is refused before anything runs. Defaults are the author's and are not checked.
 */
function checkInputValues(
  d: Directive,
  inputs: Record<string, unknown>,
  given: Record<string, unknown>,
): void {
  for (const check of d.valueChecks) {
    if (!(check.input in given)) continue;
    const value = lookupPath(inputs[check.input], check.path);
    if (value === MISSING || value === undefined) continue;
    const texts = check.eachElement && Array.isArray(value) ? value : [value];
    for (const item of texts)
      checkNeeds(
        stringifyValue(item),
        check.needs,
        check.label,
        'the run was not started',
        check.loc,
      );
  }
}

/**
 * Whether `inputs` surely pass the schema `validatorOf(d)` compiles: each declared, of its type, and
 * every required one given. `false` means "ask ajv", not "invalid".
 */
function plainlyValid(d: Directive, inputs: Record<string, unknown>): boolean {
  if (d.inputs.length === 0 && d.source.format === 'graph') return false;
  for (const [name, value] of Object.entries(inputs)) {
    const decl = d.inputs.find((i) => i.name === name);
    if (decl === undefined || !ofType(decl.type, value)) return false;
  }
  return d.inputs.every((i) => !i.required || i.hasDefault || inputs[i.name] !== undefined);
}

function ofType(type: InputType, value: unknown): boolean {
  switch (type) {
    case 'string':
    case 'boolean':
      return typeof value === type;
    case 'integer':
      return Number.isSafeInteger(value);
    case 'number':
      return Number.isFinite(value);
    case 'array':
      return Array.isArray(value);
    case 'object':
      return value !== null && typeof value === 'object' && !Array.isArray(value);
  }
}

function describe(e: ErrorObject, d: Directive): string {
  const name = e.instancePath.split('/')[1] ?? '';
  if (e.keyword === 'required')
    return `missing required input "${String(e.params.missingProperty)}"`;
  if (e.keyword === 'additionalProperties') {
    return `unknown input "${String(e.params.additionalProperty)}" (declared: ${d.inputs.map((i) => i.name).join(', ') || 'none'})`;
  }
  return `input "${name}" ${e.message ?? 'is invalid'}`;
}

function article(type: string): string {
  return /^[aeiou]/.test(type) ? 'an' : 'a';
}
