/**
 * Idempotency claims of an embedded project: files under `.dirigent/idempotency/`, made
 * exclusively (see `operations/idempotency.ts` for what a claim promises).
 */
import { createHash, randomUUID } from 'node:crypto';
import { link, mkdir, readFile, stat, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  idempotencyConflict,
  runIdForKey,
  type Claim,
  type IdempotencyStore,
} from '../operations/idempotency.js';
import { processAlive } from '../runtimes/process-alive.js';
import { ignoreMissing } from '../errors/ignore-expected.js';

/** Claims in files under `.dirigent/idempotency/` of an embedded project, made exclusively. */
export class FileIdempotency implements IdempotencyStore {
  private readonly dir: string;

  constructor(projectDir: string) {
    this.dir = join(projectDir, '.dirigent', 'idempotency');
  }

  async held(key: string, windowMs: number): Promise<boolean> {
    const held = await readHeld(this.fileOf(key));
    return held !== undefined && Date.now() - held.at <= windowMs;
  }

  private fileOf(key: string): string {
    return join(this.dir, `${createHash('sha256').update(key).digest('hex')}.json`);
  }

  async claim(key: string, fingerprint: string, windowMs: number): Promise<Claim> {
    const runId = runIdForKey(this.dir, key);
    const file = this.fileOf(key);
    await mkdir(this.dir, { recursive: true });
    // Written aside, then linked into place: the claim appears whole, or not at all.
    const tmp = `${file}.${process.pid}.${randomUUID()}.tmp`;
    await writeFile(tmp, JSON.stringify({ runId, fingerprint, pid: process.pid }));
    try {
      await link(tmp, file);
      return { runId, created: true };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    } finally {
      await unlink(tmp).catch(ignoreMissing);
    }
    const held = await readHeld(file);
    if (held === undefined || Date.now() - held.at > windowMs) {
      // Expired (or gone meanwhile): the key is free again.
      await unlink(file).catch(ignoreMissing); // another claimer may have removed it first
      return this.claim(key, fingerprint, windowMs);
    }
    if (held.fingerprint !== fingerprint) throw idempotencyConflict(key);
    // An embedded run lives in the process that started it: pending while that process lives.
    return { runId, created: false, pending: processAlive(held.pid) };
  }
}

async function readHeld(
  file: string,
): Promise<{ fingerprint: string; pid?: number; at: number } | undefined> {
  try {
    const [text, st] = await Promise.all([readFile(file, 'utf8'), stat(file)]);
    return { ...(JSON.parse(text) as { fingerprint: string; pid?: number }), at: st.mtimeMs };
  } catch {
    return undefined;
  }
}
