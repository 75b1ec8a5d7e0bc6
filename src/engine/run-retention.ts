/**
 * How long a run is kept once it has ended: its directive's `<retention days>`, else its project's
 * `retention` (`.ai/config/dirigent.yaml`), else the store's default (7 days unless a worker was
 * given another). Stores ask it when they save an ended run, from what they save: the directive's
 * text and the project's folder travel with every stored run, so the retention needs nothing
 * threaded through the engine.
 *
 * Both readings are cached: a directive's by the content hash of its text (a bounded map), a
 * project's configuration for a few seconds (a file an operator edits is read again soon; a store
 * saving thousands of runs a second reads it seldom).
 */
import { contentHash, parseDirective, partialDirectiveOf } from '../directive/parse-directive.js';
import { loadProjectPolicy } from '../policy/project-policy.js';
import type { StoredRun } from './run-store.js';

/** What a run's retention is read from: its directive's text and its project's folder. */
export type RetainedRun = Pick<StoredRun, 'projectDir'> & {
  source: Pick<StoredRun['source'], 'text' | 'hash'>;
};

/** The directives' retentions kept, by content hash: cleared all at once beyond this many. */
const MAX_DIRECTIVES = 500;
/** How long a project's configuration is trusted once read, ms. */
const POLICY_TTL_MS = 5000;

const directives = new Map<string, number | undefined>();
const projects = new Map<string, { at: number; seconds: number | undefined }>();

/**
 * The seconds `run` is kept once ended: see the module comment; `fallback` when neither its
 * directive nor its project sets a retention. Never throws: a directive or a configuration that
 * no longer reads (edited since the run started) is read as setting nothing.
 */
export function runRetentionSeconds(run: RetainedRun, fallback: number): number {
  return directiveRetention(run.source) ?? projectRetention(run.projectDir) ?? fallback;
}

/** The directive's `<retention days>` in seconds, if it sets one. */
export function directiveRetention(source: RetainedRun['source']): number | undefined {
  const key = source.hash ?? contentHash(source.text);
  if (directives.has(key)) return directives.get(key);
  let seconds: number | undefined;
  try {
    seconds = parseDirective(source.text, 'retention.md').runSettings.retentionSeconds;
  } catch (err) {
    // Read whole but refused (an env name this check does not allow, say): its settings stand.
    seconds = partialDirectiveOf(err)?.runSettings.retentionSeconds;
  }
  if (directives.size >= MAX_DIRECTIVES) directives.clear();
  directives.set(key, seconds);
  return seconds;
}

/** The project's `retention` in seconds, if its configuration sets one. */
export function projectRetention(projectDir: string, now = Date.now()): number | undefined {
  const known = projects.get(projectDir);
  if (known !== undefined && now - known.at < POLICY_TTL_MS) return known.seconds;
  let seconds: number | undefined;
  try {
    seconds = loadProjectPolicy(projectDir, {}).retentionSeconds;
  } catch {
    // A malformed file refuses the project when it opens; here it sets nothing.
    seconds = undefined;
  }
  if (projects.size >= MAX_DIRECTIVES) projects.clear();
  projects.set(projectDir, { at: now, seconds });
  return seconds;
}

/** Forgets what was read (tests that rewrite a project's configuration). */
export function forgetRetentions(): void {
  directives.clear();
  projects.clear();
}
