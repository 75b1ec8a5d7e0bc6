/** Bytes kept of each of stdout and stderr; the rest is drained (so the child never blocks). */
const MAX_OUTPUT = 1024 * 1024;

/** Collects one output stream up to {@link MAX_OUTPUT} bytes and notes what it dropped. */
export class Capture {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private dropped = 0;
  constructor(private readonly name: string) {}

  push(chunk: Buffer): void {
    const room = MAX_OUTPUT - this.size;
    if (chunk.length > room) this.dropped += chunk.length - room;
    if (room <= 0) return;
    const kept = chunk.length > room ? chunk.subarray(0, room) : chunk;
    this.chunks.push(kept);
    this.size += kept.length;
  }

  text(): string {
    const text = Buffer.concat(this.chunks, this.size).toString('utf8');
    if (this.dropped === 0) return text;
    return `${text}\n[dirigent: ${this.name} truncated at ${MAX_OUTPUT} bytes; ${this.dropped} more dropped]`;
  }
}
