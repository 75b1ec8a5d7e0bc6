/** Replacing a file's content so that a reader sees the old content or the new, never a part. */
import { randomBytes } from 'node:crypto';
import { chmod, open, realpath, rename, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/**
 * Writes `content` to a temporary file beside `path` (in the same folder, so on the same file
 * system), flushes it to disk, gives it `path`'s permissions and renames it over `path`: the
 * rename is atomic, so a crash or a concurrent reader never sees a half-written file. A `path`
 * that is a symbolic link keeps being one: its target is replaced.
 */
export async function writeFileAtomic(path: string, content: string): Promise<void> {
  const target = await realpath(path);
  const mode = (await stat(target)).mode & 0o7777;
  const temp = join(dirname(target), `.${basename(target)}.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await open(temp, 'wx', 0o600);
  try {
    try {
      await handle.writeFile(content, 'utf8');
      await handle.datasync();
    } finally {
      await handle.close();
    }
    await chmod(temp, mode);
    await rename(temp, target);
  } catch (err) {
    await unlink(temp).catch(() => {
      /* Not made yet, or not removable: the error that stopped the write is the one to tell. */
    });
    throw err;
  }
}
