/**
 * Where each value of a shell template lands. A template is text written by a directive's author
 * with slots for values: `echo 'Hello, {input:name}!'` is the texts `["echo 'Hello, ", "!'"]` and
 * one slot between them. Bash reads the text; this scanner follows bash's quoting (single and
 * double quotes, `$'…'`, here-documents, comments, `$(…)`, backquotes, `${…}`, arithmetic) and
 * the shape of simple commands, to tell for each slot how a reference to a variable must be
 * written there so that the value stays one piece of data ({@link ShellQuoting}), and whether bash
 * would still read the value as code there (arithmetic, `eval`, `sh -c`). Pure: no I/O.
 *
 * It is a reader of quoting, not a full shell parser: `case` patterns inside `$(…)` and a few rarer
 * forms may be misread, which can only make a value's rendering wrong, never let it run as code,
 * since a value always reaches bash as a variable's expansion (see `shell-render.ts`).
 */
import { endShellCommand } from './end-shell-word.js';
import { scanCommand } from './scan-command.js';
import { scanArith, scanDouble, scanHeredoc, scanParam } from './scan-quoted-frames.js';
import { ShellCursor } from './shell-cursor.js';
import type { ShellSlot } from './shell-slot.js';

export type { ShellQuoting, ShellSlot } from './shell-slot.js';

/** The slots of the template made of `texts` (one more text than slots), in order. */
export function shellSlots(texts: readonly string[]): ShellSlot[] {
  const cur = new ShellCursor(texts);
  for (cur.i = 0; cur.i < cur.units.length; cur.i++) {
    const u = cur.units[cur.i]!;
    const f = cur.stack[cur.stack.length - 1]!;
    switch (f.kind) {
      case 'cmd':
        scanCommand(cur, f, u);
        break;
      case 'single':
      case 'ansi':
        if (typeof u === 'number') cur.record(u, cur.quoted(f.kind));
        else if (u === "'") cur.stack.pop();
        else if (u === '\\' && f.kind === 'ansi') cur.skipEscaped();
        break;
      case 'double':
        scanDouble(cur, u);
        break;
      case 'comment':
        if (typeof u === 'number') cur.record(u, cur.quoted('comment'));
        else if (u === '\n') {
          cur.stack.pop();
          cur.i--; // the newline ends the command too
        }
        break;
      case 'arith':
        scanArith(cur, f, u);
        break;
      case 'param':
        scanParam(cur, f, u);
        break;
      case 'heredoc':
        scanHeredoc(cur, f, u);
        break;
    }
  }
  // The text ends every command still open: a `[[ … ]]` at the very end settles its operands.
  for (const f of cur.stack) if (f.kind === 'cmd') endShellCommand(f);
  return cur.slots;
}
