/**
 * The postings of the search index. A postings list (a term in a field; `slot` = term × fields +
 * field) is a run of entries, one per document that has the term there (in increasing order): the
 * document and where its positions end; and a run of positions (in the index's stream), each with
 * the words just before and after it there, so that a phrase is checked without leaving the
 * postings. Runs live in shared arrays (arenas) with some room to grow; a run that outgrows it
 * moves to the end of its arena, with twice the room. How many of a list's documents are still
 * live is kept too.
 */
import { grown } from './grown.js';

/** Every postings list of a `TermIndex` (see the module comment). */
export class Postings {
  /** Per postings list (by slot): where its entries start, how many, and room for how many. */
  listStart = new Int32Array(64);
  listCount = new Int32Array(64);
  listRoom = new Int32Array(64);
  /** Per postings list: how many of its documents are live. */
  listLive = new Int32Array(64);
  /** Per postings list: where its positions start, and room for how many. */
  listPos = new Int32Array(64);
  listPosRoom = new Int32Array(64);
  /** Entries: the document, and where its positions end (counted from the list's first). */
  entryDoc = new Int32Array(1024);
  entryEnd = new Int32Array(1024);
  entriesUsed = 0;
  /** Positions in the stream, with the terms before and after each there (-1: none). */
  posAt = new Int32Array(1024);
  posBefore = new Int32Array(1024);
  posAfter = new Int32Array(1024);
  positionsUsed = 0;

  /** Makes room for the lists of `slots` slots. */
  reserve(slots: number): void {
    if (slots <= this.listStart.length) return;
    this.listStart = grown(this.listStart, slots);
    this.listCount = grown(this.listCount, slots);
    this.listRoom = grown(this.listRoom, slots);
    this.listLive = grown(this.listLive, slots);
    this.listPos = grown(this.listPos, slots);
    this.listPosRoom = grown(this.listPosRoom, slots);
  }

  /**
   * Lays the runs of the first `slots` lists out in the order of the slots, with room to grow,
   * and room after them for the runs that outgrow theirs: `counts` holds the documents and the
   * positions of each list (at `2 × slot` and `2 × slot + 1`). For a build, before any entry.
   */
  layOut(counts: Int32Array, slots: number): void {
    let entries = 0;
    let positions = 0;
    for (let slot = 0; slot < slots; slot++) {
      const docs = counts[2 * slot]!;
      if (docs === 0) continue;
      this.listStart[slot] = entries;
      this.listRoom[slot] = room(docs);
      this.listPos[slot] = positions;
      this.listPosRoom[slot] = room(counts[2 * slot + 1]!);
      entries += this.listRoom[slot]!;
      positions += this.listPosRoom[slot]!;
    }
    this.entryDoc = new Int32Array(entries + spare(entries));
    this.entryEnd = new Int32Array(entries + spare(entries));
    this.entriesUsed = entries;
    this.posAt = new Int32Array(positions + spare(positions));
    this.posBefore = new Int32Array(positions + spare(positions));
    this.posAfter = new Int32Array(positions + spare(positions));
    this.positionsUsed = positions;
  }

  /**
   * Adds document `num` (later than any there) to list `slot`, its positions starting where the
   * last one's end.
   */
  addEntry(slot: number, num: number): void {
    const count = this.listCount[slot]!;
    if (count === this.listRoom[slot]) this.moveEntries(slot);
    const at = this.listStart[slot]! + count;
    this.entryDoc[at] = num;
    this.entryEnd[at] = count === 0 ? 0 : this.entryEnd[at - 1]!;
    this.listCount[slot] = count + 1;
    this.listLive[slot]!++;
  }

  /** Adds position `p`, between terms `before` and `after`, to the last entry of list `slot`. */
  addPosition(slot: number, p: number, before: number, after: number): void {
    const last = this.listStart[slot]! + this.listCount[slot]! - 1;
    const used = this.entryEnd[last]!;
    if (used === this.listPosRoom[slot]) this.movePositions(slot);
    const at = this.listPos[slot]! + used;
    this.posAt[at] = p;
    this.posBefore[at] = before;
    this.posAfter[at] = after;
    this.entryEnd[last] = used + 1;
  }

  /** Moves the entries of list `slot` to the end of their arena, with twice the room. */
  private moveEntries(slot: number): void {
    const count = this.listCount[slot]!;
    const room = Math.max(4, 2 * count);
    const to = this.entriesUsed;
    this.entriesUsed += room;
    if (this.entriesUsed > this.entryDoc.length) {
      this.entryDoc = grown(this.entryDoc, this.entriesUsed);
      this.entryEnd = grown(this.entryEnd, this.entriesUsed);
    }
    const from = this.listStart[slot]!;
    this.entryDoc.copyWithin(to, from, from + count);
    this.entryEnd.copyWithin(to, from, from + count);
    this.listStart[slot] = to;
    this.listRoom[slot] = room;
  }

  /** Moves the positions of list `slot` to the end of their arena, with twice the room. */
  private movePositions(slot: number): void {
    const count = this.listPosRoom[slot]!;
    const room = Math.max(4, 2 * count);
    const to = this.positionsUsed;
    this.positionsUsed += room;
    if (this.positionsUsed > this.posAt.length) {
      this.posAt = grown(this.posAt, this.positionsUsed);
      this.posBefore = grown(this.posBefore, this.positionsUsed);
      this.posAfter = grown(this.posAfter, this.positionsUsed);
    }
    const from = this.listPos[slot]!;
    this.posAt.copyWithin(to, from, from + count);
    this.posBefore.copyWithin(to, from, from + count);
    this.posAfter.copyWithin(to, from, from + count);
    this.listPos[slot] = to;
    this.listPosRoom[slot] = room;
  }
}

/** The room a build leaves after `used` entries of an arena, for runs that move there. */
function spare(used: number): number {
  return 1024 + (used >> 3);
}

/** The room a build gives a postings run of `count` entries: some to spare for later ones. */
function room(count: number): number {
  return count + 2 + (count >> 4);
}
