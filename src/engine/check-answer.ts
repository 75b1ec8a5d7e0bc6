/**
 * Checking a signal's payload against the answer the step waiting for it declares (its `<answer>`
 * children), before the payload reaches the run: a payload that does not match is refused with
 * `INVALID_PAYLOAD`, listing every problem, and the run waits on as it was. A live run is checked
 * against its directive's declaration, which is the authority; a run record (what an operation
 * reads before it sends a signal to a Redis worker) against the copy its `waiting` entry carries.
 */
import type { CompiledNode } from '../compiler/compiled-directive.js';
import {
  answerSchema,
  answerSpecOf,
  describeAnswer,
  exampleAnswer,
  withArticle,
  type AnswerSpec,
} from '../directive/answer-spec.js';
import { closest } from '../errors/did-you-mean.js';
import { invalidPayload, type RefusedSignal } from '../errors/run-errors.js';
import type { RunRecord, WaitingStep } from './run-record.js';
import { schemaValidator, type ErrorObject } from './schema-validator.js';

/** Longest stretch of a refused value quoted in a problem. */
const SHOWN_CHARS = 60;

/** Refuses (`INVALID_PAYLOAD`, every problem listed) a payload that does not match `spec`. */
export function checkAnswer(spec: AnswerSpec, payload: unknown, at: RefusedSignal): void {
  const validate = schemaValidator(answerSchema(spec));
  if (validate(payload)) return;
  const problems = [...new Set((validate.errors ?? []).map((e) => problemOf(e, spec, payload)))];
  throw invalidPayload(at, problems, describeAnswer(spec), exampleAnswer(spec));
}

/**
 * {@link checkAnswer} against the declaration of the step of `record` that waits for signal
 * `name` (its own, or a child run's), when it declares one; nothing to check otherwise.
 */
export function checkRecordAnswer(record: RunRecord, name: string, payload: unknown): void {
  const w = record.waiting?.find((x) => x.signal === name);
  if (w?.answer === undefined) return;
  checkAnswer(w.answer, payload, { runId: w.runId ?? record.runId, step: w.step, signal: name });
}

/** What checking a signal on a live run reads of it (an `ActiveRun`). */
export interface AnsweredRun {
  readonly runId: string;
  readonly waiting: { values(): WaitingStep[] };
  node(name: string): CompiledNode;
}

/**
 * {@link checkAnswer} against the declaration, in the run's directive, of the step of `run` that
 * waits for signal `name`; nothing to check when no step of it waits for `name` or declares none.
 */
export function checkRunAnswer(run: AnsweredRun, name: string, payload: unknown): void {
  const w = run.waiting.values().find((x) => x.signal === name);
  if (w === undefined) return;
  const { node } = run.node(w.step);
  const action = node.kind === 'step' ? node.action : undefined;
  if ((action?.type !== 'instruction' && action?.type !== 'wait') || !action.answer) return;
  checkAnswer(answerSpecOf(action.answer), payload, {
    runId: run.runId,
    step: w.step,
    signal: name,
  });
}

/** One ajv error as a person reads it, naming the field and showing the value refused. */
function problemOf(e: ErrorObject, spec: AnswerSpec, payload: unknown): string {
  // Declared names need no JSON Pointer unescaping: they are letters, digits and `_`.
  const field = e.instancePath.split('/')[1];
  const declared = spec.kind === 'fields' ? spec.fields.map((f) => f.name) : [];
  switch (e.keyword) {
    case 'required':
      return `missing required field "${String(e.params.missingProperty)}"`;
    case 'additionalProperties': {
      const name = String(e.params.additionalProperty);
      const near = closest(name, declared);
      return `unknown field "${name}" (${near ? `did you mean "${near}"? ` : ''}declared: ${declared.join(', ')})`;
    }
    case 'type':
      if (field === undefined)
        return spec.kind === 'fields'
          ? `the answer must be an object with fields ${declared.join(', ')}, got ${shown(payload)}`
          : `the answer must be ${withArticle(spec.type)}, got ${shown(payload)}`;
      return `field "${field}" must be ${withArticle(String(e.params.type))}, got ${shown((payload as Record<string, unknown>)[field])}`;
    default:
      return `${field === undefined ? 'the answer' : `field "${field}"`} ${e.message ?? 'is invalid'}`;
  }
}

/** A value as JSON, cut short when long. */
function shown(value: unknown): string {
  const text = JSON.stringify(value) ?? 'nothing';
  return text.length > SHOWN_CHARS ? `${text.slice(0, SHOWN_CHARS)}…` : text;
}
