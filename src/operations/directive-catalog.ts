/**
 * The directives a project can run: every file under `.ai/directives/` of its spaces (the
 * project's, the user's, the system's; a higher space's item shadows a lower one's), read and
 * checked, with what a caller needs to start one: its inputs.
 */
import { readdir } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import type { Diagnostic, InputType } from '../directive/ast.js';
import { diagnosticsOf } from '../directive/diagnostics.js';
import type { DirectiveLoader, LoadedDirective } from '../engine/directive-loader.js';
import { DirigentError } from '../errors/dirigent-error.js';
import { KIND_DIRS, KIND_EXTENSIONS } from '../items/item-kind.js';
import type { SpaceName } from '../items/space.js';

/** One input of a directive, as a caller supplies it. */
export interface InputInfo {
  name: string;
  type: InputType;
  required: boolean;
  default?: unknown;
  description?: string;
}

/** A directive of the project, valid or not. */
export interface DirectiveInfo {
  /** Its item id: what `start` takes. */
  directive: string;
  space: SpaceName;
  valid: boolean;
  name?: string;
  version?: string;
  title?: string;
  description?: string;
  category?: string;
  inputs: InputInfo[];
  /** Its `<schedule>`s: a run per cron tick. */
  schedules: { name: string; cron: string; timezone?: string; inputs: Record<string, string> }[];
  /** The events it runs on (`<on event>`). */
  events: string[];
  /** Why it cannot run (when not valid). */
  errors: Diagnostic[];
  warnings: Diagnostic[];
}

/** Every directive of the project's spaces, sorted by item id. */
export async function listDirectives(loader: DirectiveLoader): Promise<DirectiveInfo[]> {
  const seen = new Set<string>();
  const out: DirectiveInfo[] = [];
  for (const space of loader.items.spaces) {
    const dir = join(space.root, KIND_DIRS.directive);
    for (const file of await filesUnder(dir)) {
      const ext = KIND_EXTENSIONS.directive.find((e) => file.endsWith(e));
      if (ext === undefined) continue;
      const id = relative(dir, file).slice(0, -ext.length).split(sep).join('/');
      if (seen.has(id)) continue; // shadowed, or another extension of the same item
      seen.add(id);
      out.push(await describe(loader, id, space.name, file));
    }
  }
  return out.sort((a, b) => (a.directive < b.directive ? -1 : 1));
}

/** What a loaded directive offers a caller. */
export function infoOf(loaded: LoadedDirective, space: SpaceName): DirectiveInfo {
  const d = loaded.compiled.directive;
  return {
    directive: loaded.itemId,
    space,
    valid: true,
    name: d.name,
    version: d.version,
    ...(d.title !== undefined && { title: d.title }),
    ...(d.description !== undefined && { description: d.description }),
    ...(d.category !== undefined && { category: d.category }),
    inputs: d.inputs.map((i) => ({
      name: i.name,
      type: i.type,
      required: i.required,
      ...(i.hasDefault && { default: i.default }),
      ...(i.description !== undefined && { description: i.description }),
    })),
    schedules: d.schedules.map((s) => ({
      name: s.name,
      cron: s.cron,
      ...(s.timezone !== undefined && { timezone: s.timezone }),
      inputs: s.inputs,
    })),
    events: d.events.map((e) => e.event),
    errors: [],
    warnings: d.warnings,
  };
}

async function describe(
  loader: DirectiveLoader,
  id: string,
  space: SpaceName,
  file: string,
): Promise<DirectiveInfo> {
  try {
    return infoOf(await loader.loadFile(file), space);
  } catch (err) {
    const errors = diagnosticsOf(DirigentError.from(err));
    return {
      directive: id,
      space,
      valid: false,
      inputs: [],
      schedules: [],
      events: [],
      errors,
      warnings: [],
    };
  }
}

/** Files under `dir`, recursively; none when it does not exist. */
async function filesUnder(dir: string): Promise<string[]> {
  try {
    const entries = await readdir(dir, { recursive: true, withFileTypes: true });
    return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
  } catch {
    return [];
  }
}
