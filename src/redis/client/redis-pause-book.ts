/**
 * The pauses of a Redis deployment (see `operations/pause.ts`): the set `<prefix>:paused` of the
 * paused directives' item ids (`*` for all of them), told on the channel `<prefix>:paused` when it
 * changes. The view a run's steps ask is kept in memory: read when the book opens, again on each
 * message of the channel, and every few seconds besides (a message lost with a connection).
 */
import { duplicateOf } from '../redis-connection.js';
import type { RedisClient } from '../redis-client.js';
import {
  nameOf,
  pausedIn,
  stateOf,
  type PauseBook,
  type PauseState,
  type PauseTarget,
} from '../../operations/pause.js';

/** How often the view is read again without a message. */
const REFRESH_MS = 2000;

/** See the module comment. */
export class RedisPauseBook implements PauseBook {
  private view: PauseState = { all: false, directives: [] };
  private subscriber: RedisClient | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
  ) {}

  /** Keeps the view up to date from now on (a worker's engine asks it at every step). */
  async watch(): Promise<void> {
    if (this.subscriber !== undefined) return;
    const sub = (this.subscriber = duplicateOf(this.redis));
    sub.on('message', () => void this.state().catch(() => undefined));
    sub.on('error', () => {
      // ioredis reconnects by itself; the timer reads what a lost message said.
    });
    await sub.subscribe(this.key);
    this.timer = setInterval(() => void this.state().catch(() => undefined), REFRESH_MS);
    this.timer.unref();
    await this.state();
  }

  isPaused(directive: string): boolean {
    return pausedIn(this.view, directive);
  }

  async state(): Promise<PauseState> {
    this.view = stateOf(await this.redis.smembers(this.key));
    return structuredClone(this.view);
  }

  async pause(target: PauseTarget): Promise<void> {
    await this.redis.multi().sadd(this.key, nameOf(target)).publish(this.key, 'pause').exec();
    await this.state();
  }

  async resume(target: PauseTarget): Promise<void> {
    const tx = this.redis.multi();
    if ('all' in target) tx.del(this.key);
    else tx.srem(this.key, nameOf(target));
    await tx.publish(this.key, 'resume').exec();
    await this.state();
  }

  close(): void {
    clearInterval(this.timer);
    this.subscriber?.disconnect();
    this.subscriber = undefined;
  }

  private get key(): string {
    return `${this.prefix}:paused`;
  }
}
