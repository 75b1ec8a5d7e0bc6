/**
 * The pauses of an embedded project (see `operations/pause.ts`): `.dirigent/paused.json`, a list
 * of the paused directives' item ids (`*` for all of them). The view a run's steps ask is read
 * again at most once a second, so a pause made by another process reaches runs under way here.
 */
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import {
  nameOf,
  pausedIn,
  stateOf,
  type PauseBook,
  type PauseState,
  type PauseTarget,
} from '../operations/pause.js';

/** How old the view may be before a step reads the file again. */
const FRESH_MS = 1000;

/** See the module comment. */
export class FilePauseBook implements PauseBook {
  private readonly file: string;
  private view: PauseState = { all: false, directives: [] };
  private readAt = -Infinity;
  private mtimeMs = -1;

  constructor(projectDir: string) {
    this.file = join(projectDir, '.dirigent', 'paused.json');
  }

  isPaused(directive: string): boolean {
    if (Date.now() - this.readAt > FRESH_MS) this.refresh();
    return pausedIn(this.view, directive);
  }

  state(): Promise<PauseState> {
    this.mtimeMs = -1;
    this.refresh();
    return Promise.resolve(structuredClone(this.view));
  }

  pause(target: PauseTarget): Promise<void> {
    const names = new Set(this.names());
    names.add(nameOf(target));
    this.write(names);
    return Promise.resolve();
  }

  resume(target: PauseTarget): Promise<void> {
    const names = new Set(this.names());
    if ('all' in target) names.clear();
    else names.delete(target.directive);
    this.write(names);
    return Promise.resolve();
  }

  close(): void {}

  private names(): string[] {
    this.mtimeMs = -1;
    this.refresh();
    return [...(this.view.all ? ['*'] : []), ...this.view.directives];
  }

  /** Reads the file when it changed since the last read. */
  private refresh(): void {
    this.readAt = Date.now();
    let mtimeMs: number;
    try {
      mtimeMs = statSync(this.file).mtimeMs;
    } catch {
      this.view = { all: false, directives: [] };
      this.mtimeMs = -1;
      return;
    }
    if (mtimeMs === this.mtimeMs) return;
    this.mtimeMs = mtimeMs;
    try {
      const names = JSON.parse(readFileSync(this.file, 'utf8')) as unknown;
      this.view = stateOf(Array.isArray(names) ? names.filter((n) => typeof n === 'string') : []);
    } catch {
      // A file being replaced: the view stays as it was until the next read.
    }
  }

  /** Writes the names whole (aside, then renamed into place). */
  private write(names: Set<string>): void {
    mkdirSync(dirname(this.file), { recursive: true });
    const tmp = `${this.file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify([...names].sort()));
    renameSync(tmp, this.file);
    this.view = stateOf(names);
    this.readAt = Date.now();
    this.mtimeMs = -1;
  }
}
