/**
 * The catalogue of malformed directives and bad inputs: every mistake the project promises to
 * catch, with the error code it is caught as and the place it is reported at.
 *
 * The cases are tables in `cases/`, one file per topic. How to read a case: the directive text is
 * written inline; `'''` stands for a Markdown code fence (three backticks) and `‸` marks the exact
 * character the error must point at (it is removed before parsing). The first `‸` is where the thrown error's `location` points; when a case lists
 * several codes, the n-th `‸` is where the n-th diagnostic points. Every parse error must also say
 * how to fix it (a hint).
 *
 * Parse cases go through `parseDirective`; run cases through the real `Engine`, `DirectiveLoader`
 * and built-in tools, in a temporary project directory.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Diagnostic } from '../../src/directive/ast.js';
import { formatDiagnostic } from '../../src/directive/diagnostics.js';
import { parseDirective } from '../../src/directive/parse-directive.js';
import { DirectiveLoader } from '../../src/engine/directive-loader.js';
import { Engine } from '../../src/engine/engine.js';
import {
  DirigentError,
  ErrorCode,
  formatLocation,
  type SourceLocation,
} from '../../src/errors/index.js';
import { Dirigent } from '../../src/operations/dirigent.js';
import { BuiltinDispatcher } from '../../src/tools/builtin-dispatcher.js';
import { ANSWERS } from './cases/answers.js';
import { COMPENSATION } from './cases/compensation.js';
import { DATA_AND_PERMISSIONS } from './cases/data-and-permissions.js';
import { DIRECTIVE_AND_INPUTS } from './cases/directive-and-inputs.js';
import { EDGES_AND_CONTROL } from './cases/edges-and-control.js';
import { FILE_AND_XML } from './cases/file-and-xml.js';
import { directive, FILE, locate, md, type Malformed } from './cases/markup.js';
import {
  BAD_INPUTS,
  INPUTS_DIRECTIVE,
  RUN_FAILURES,
  USED_INPUT_DIRECTIVE,
} from './cases/runtime.js';
import { PROJECT_CHECKS, PROJECT_CHECKS_ALLOW, PROJECT_ITEMS } from './cases/project-checks.js';
import { RUN_SETTINGS } from './cases/run-settings.js';
import { STATIC_CHECKS, STATIC_CHECKS_ALLOW } from './cases/static-checks.js';
import { STEPS } from './cases/steps.js';

// ---------------------------------------------------------------------------------------------
// Malformed directives: caught when the file is parsed, before anything runs

const MALFORMED: Malformed[] = [
  ...FILE_AND_XML,
  ...DIRECTIVE_AND_INPUTS,
  ...STEPS,
  ...EDGES_AND_CONTROL,
  ...DATA_AND_PERMISSIONS,
  ...RUN_SETTINGS,
  ...ANSWERS,
  ...STATIC_CHECKS,
  ...COMPENSATION,
];

function parseError(source: string): DirigentError {
  try {
    parseDirective(source, FILE);
  } catch (err) {
    expect(err).toBeInstanceOf(DirigentError);
    return err as DirigentError;
  }
  throw new Error('expected the directive to be rejected, but it parsed');
}

describe('malformed directives are rejected at parse time, at the line of the mistake', () => {
  it('the catalogue covers at least 30 parse cases', () => {
    expect(MALFORMED.length).toBeGreaterThanOrEqual(30);
  });

  for (const { spec, text, code, more = [], says = [] } of MALFORMED)
    it(spec, () => {
      const { source, marks } = locate(text, FILE);
      const codes = [code, ...more];
      expect(marks, 'one ‸ per expected diagnostic').toHaveLength(codes.length);
      const err = parseError(source);

      expect(err.code).toBe(code);
      expect(err.location).toEqual(marks[0]);
      for (const part of says) expect(err.message).toContain(part);
      expect(err.hint, 'every parse error says how to fix it').toMatch(/\S/);
      // As a person sees it: file:line:column, the message and the code.
      expect(err.describe()).toContain(`${formatLocation(marks[0]!)}: `);
      expect(err.describe()).toContain(`[${code}]`);

      const diagnostics = err.details?.diagnostics as Diagnostic[] | undefined;
      expect(diagnostics?.map((d) => ({ code: d.code, loc: d.loc }))).toEqual(
        codes.map((c, i) => ({ code: c, loc: marks[i] })),
      );
      for (const d of diagnostics ?? []) {
        expect(d.hint, `hint of ${d.code}: ${d.message}`).toMatch(/\S/);
        expect(formatDiagnostic(d)).toContain(`${formatLocation(d.loc!)}: error: `);
      }
    });
});

describe('validate answers every malformed directive with its located errors, never INTERNAL', () => {
  let project: string;
  let dirigent: Dirigent;
  beforeAll(async () => {
    project = await mkdtemp(join(tmpdir(), 'dirigent-catalogue-validate-'));
    dirigent = await Dirigent.open({ project });
  });
  afterAll(async () => {
    await dirigent.close();
    await rm(project, { recursive: true, force: true });
  });

  it('each case of the catalogue: the codes the parse gives, in file order, at least', async () => {
    for (const { spec, text, code, more = [] } of MALFORMED) {
      const { source } = locate(text, FILE);
      const found = await dirigent.validate({ source });
      const codes = found.errors.map((e) => e.code);
      expect(found.valid, spec).toBe(false);
      expect(codes, spec).not.toContain('INTERNAL');
      expect(codes, spec).toEqual(expect.arrayContaining([code, ...more]));
    }
  });
});

describe('what expressions read in ways that cannot be followed is left alone', () => {
  for (const { spec, text } of STATIC_CHECKS_ALLOW)
    it(spec, () => {
      const d = parseDirective(text, FILE);
      expect(d.warnings).toEqual([]);
    });
});

// ---------------------------------------------------------------------------------------------
// What stays lenient, for RYE's own files

describe('RYE leniency is kept: these are warnings, not errors', () => {
  it('prose after the fence with a bare & and < is read leniently, with a warning at its line', () => {
    const { source, marks } = locate(
      md(`
        # Case

        '''xml
        <directive name="case" version="1.0.0"/>
        '''

        <process>
          <step name="think">
            Compare a ‸< b and keep R&D notes.
          </step>
        </process>
      `),
      FILE,
    );
    const d = parseDirective(source, FILE);
    expect(d.process.map((n) => n.name)).toEqual(['think']);
    expect(d.warnings.map((w) => ({ code: w.code, loc: w.loc }))).toEqual([
      { code: 'LENIENT_XML', loc: marks[0] },
    ]);
  });

  it('executing a tool that <permissions> do not grant is a PERMISSION_DENIED warning at the <execute> (the step fails when it runs)', () => {
    const { source, marks } = locate(
      directive(`
        <metadata>
          <permissions>
            <execute><tool>dirigent.util.*</tool></execute>
          </permissions>
        </metadata>
        <process>
          <step name="list">
            ‸<execute item_type="tool" item_id="dirigent/shell/bash">
              <param name="command" value="ls"/>
            </execute>
          </step>
        </process>
      `),
      FILE,
    );
    const d = parseDirective(source, FILE);
    expect(d.warnings.map((w) => ({ code: w.code, loc: w.loc }))).toEqual([
      { code: 'PERMISSION_DENIED', loc: marks[0] },
    ]);
    expect(d.warnings[0]!.message).toContain('rye.execute.tool.dirigent.shell.bash');
  });

  it('a RYE prose step whose text names data the directive does not declare warns at the step, and is shown as written', () => {
    const { source, marks } = locate(
      md(`
        # Case

        '''xml
        <directive name="case" version="1.0.0">
          <inputs><input name="topic" required="true"/></inputs>
        </directive>
        '''

        <process>
          ‸<step name="think">
            Read {input:topik} and \${state.notes}, then decide.
          </step>
        </process>
      `),
      FILE,
    );
    const d = parseDirective(source, FILE);
    expect(d.warnings.map((w) => ({ code: w.code, loc: w.loc }))).toEqual([
      { code: 'UNKNOWN_TEMPLATE_PATH', loc: marks[0] },
      { code: 'UNKNOWN_TEMPLATE_PATH', loc: marks[0] },
    ]);
    expect(d.warnings[0]!.message).toContain('Did you mean "topic"?');
    expect(d.warnings[0]!.message).toContain('shown as written');
  });

  it('a name that differs from the file name is a NAME_MISMATCH warning only', () => {
    const d = parseDirective(
      directive('<process><step name="a"><render>hi</render></step></process>', 'other_name'),
      FILE,
    );
    expect(d.warnings.map((w) => w.code)).toEqual(['NAME_MISMATCH']);
  });

  it("RYE's documentary elements and a prose step are accepted", () => {
    const d = parseDirective(
      directive(`
        <metadata>
          <model tier="fast"/>
          <context>kept</context>
        </metadata>
        <process>
          <step name="plan">
            <description>Think first.</description>
            Decide what to do, then <tool_call>search</tool_call> for it.
          </step>
        </process>
      `),
      FILE,
    );
    expect(d.process[0]).toMatchObject({ name: 'plan', action: { type: 'instruction' } });
  });
});
// ---------------------------------------------------------------------------------------------
// Bad inputs and failures at run time: the real engine, built-in tools, a temporary project

let root: string;
let project: string;
let engine: Engine;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'dirigent-catalogue-'));
  project = join(root, 'project');
  await mkdir(join(project, '.ai', 'directives'), { recursive: true });
  engine = new Engine({
    projectDir: project,
    dispatcher: new BuiltinDispatcher(),
    loader: new DirectiveLoader(project),
  });
});

afterAll(async () => {
  engine.release();
  await rm(root, { recursive: true, force: true });
});

/** Writes `text` as `.ai/directives/NAME.md` and returns the file and the `‸` marks in it. */
async function install(
  name: string,
  text: string,
): Promise<{ file: string; marks: SourceLocation[] }> {
  const file = join(project, '.ai', 'directives', `${name}.md`);
  const { source, marks } = locate(text, file);
  await writeFile(file, source);
  return { file, marks };
}

/** The error `engine.run` fails with (thrown at once or as a rejection). */
async function runError(name: string, inputs: Record<string, unknown>): Promise<DirigentError> {
  try {
    await engine.run(
      await engine.loader.loadFile(join(project, '.ai', 'directives', `${name}.md`)),
      inputs,
    );
  } catch (err) {
    expect(err).toBeInstanceOf(DirigentError);
    return err as DirigentError;
  }
  throw new Error('expected the run to be refused');
}

describe('bad inputs are refused before the run starts', () => {
  beforeAll(async () => {
    await install('inputs_case', INPUTS_DIRECTIVE);
  });

  for (const { spec, inputs, problems } of BAD_INPUTS)
    it(spec, async () => {
      const err = await runError('inputs_case', inputs);
      expect(err.code).toBe(ErrorCode.INVALID_INPUTS);
      expect(err.message).toContain('directive "inputs_case"');
      const listed = err.details?.problems as string[];
      for (const p of problems) {
        expect(
          listed.some((l) => l.includes(p)),
          `"${p}" in ${JSON.stringify(listed)}`,
        ).toBe(true);
        expect(err.message).toContain(p);
      }
      expect(err.hint).toContain('count (integer, required)');
      expect(existsSync(join(project, 'ran.txt')), 'nothing ran').toBe(false);
    });
});

describe("a directive's tools, child directives and parameters are checked against its project before it runs", () => {
  beforeAll(async () => {
    for (const [path, text] of Object.entries(PROJECT_ITEMS)) {
      const file = join(project, '.ai', path);
      await mkdir(dirname(file), { recursive: true });
      await writeFile(file, text);
    }
  });

  PROJECT_CHECKS.forEach(({ spec, text, code, more = [], says = [] }, n) =>
    it(spec, async () => {
      const { file, marks } = await install(`project_case_${n}`, text);
      const codes = [code, ...more];
      expect(marks, 'one ‸ per expected diagnostic').toHaveLength(codes.length);
      const loaded = await engine.loader.loadFile(file);
      let err: unknown;
      await engine.loader.checked(loaded).catch((e: unknown) => (err = e));
      expect(err, 'the directive is refused').toBeInstanceOf(DirigentError);
      const e = err as DirigentError;
      expect(e.code).toBe(code);
      expect(e.location).toEqual(marks[0]);
      for (const part of says) expect(e.message).toContain(part);
      const diagnostics = e.details?.diagnostics as Diagnostic[] | undefined;
      expect(diagnostics?.map((d) => ({ code: d.code, loc: d.loc }))).toEqual(
        codes.map((c, i) => ({ code: c, loc: marks[i] })),
      );
      for (const d of diagnostics ?? []) expect(d.hint, `hint of ${d.code}`).toMatch(/\S/);
    }),
  );

  PROJECT_CHECKS_ALLOW.forEach(({ spec, text }, n) =>
    it(spec, async () => {
      const { file } = await install(`project_allowed_${n}`, text);
      const loaded = await engine.loader.loadFile(file);
      const findings = await engine.loader.projectFindings(loaded.compiled.directive, file);
      expect(findings).toEqual({ errors: [], warnings: [] });
    }),
  );
});

describe('an input the process reads without a default is required at start, even when not marked required', () => {
  let marks: SourceLocation[];
  beforeAll(async () => {
    ({ marks } = await install('used_input', USED_INPUT_DIRECTIVE));
  });

  it('a run without it is refused with INVALID_INPUTS naming the input and where it is read, and nothing runs', async () => {
    const err = await runError('used_input', {});
    expect(err.code).toBe(ErrorCode.INVALID_INPUTS);
    expect(err.message).toContain(
      `missing input "customer", which step "report" reads as {input:customer} at ${formatLocation(marks[0]!)}`,
    );
    expect(err.location).toEqual(marks[0]);
    expect(err.hint).toContain('{input:customer?}');
    // `note` is read with `?`, `region` only by a step whose condition tests it: neither is asked for.
    expect(err.details?.problems).toHaveLength(1);
    expect(existsSync(join(project, 'ran.txt')), 'nothing ran').toBe(false);
  });

  it('given, the run starts and completes', async () => {
    const record = await engine.run(
      await engine.loader.loadFile(join(project, '.ai', 'directives', 'used_input.md')),
      { customer: 'Ada' },
    );
    expect(record.status).toBe('completed');
    expect(record.steps.find((s) => s.name === 'regional')?.status).toBe('skipped');
    await rm(join(project, 'ran.txt'), { force: true });
  });

  it('written required="false", it is not asked for: the run starts, and fails only where it reads it', async () => {
    await install(
      'optional_input',
      USED_INPUT_DIRECTIVE.replace(
        '<input name="customer" type="string">',
        '<input name="customer" type="string" required="false">',
      ).replaceAll('used_input', 'optional_input'),
    );
    const record = await engine.run(
      await engine.loader.loadFile(join(project, '.ai', 'directives', 'optional_input.md')),
      {},
    );
    expect(record.status).toBe('failed');
    expect(record.error?.step).toBe('report');
    expect(record.steps.find((s) => s.name === 'mark')?.status).toBe('completed');
    await rm(join(project, 'ran.txt'), { force: true });
  });
});

describe('failures at run time end the run with the code, the step, and where in the directive', () => {
  for (const { spec, name, text, inputs = {}, code, step, says = [] } of RUN_FAILURES)
    it(spec, async () => {
      const { file, marks } = await install(name, text);
      const run = engine.start(await engine.loader.loadFile(file), inputs);
      const record = await run.settled();

      expect(record.status).toBe('failed');
      expect(record.error).toMatchObject({ code, step });
      for (const s of says) expect(record.error!.message).toContain(s);
      const entry = record.steps.find((s) => s.name === step && s.status === 'failed');
      if (code !== ErrorCode.MAX_STEPS_EXCEEDED) expect(entry?.error?.code).toBe(code);

      // The run record names the step and says where in the file it failed.
      if (marks.length > 0) {
        expect(record.error?.location).toEqual(marks[0]);
        expect(run.steps[step]?.error?.location).toEqual(marks[0]);
      }
      expect(existsSync(join(project, 'pwned.txt')), 'a denied tool never ran').toBe(false);
      expect(existsSync(join(root, 'outside.txt')), 'nothing was written outside').toBe(false);
    });
});
