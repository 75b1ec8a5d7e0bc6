/** Keyed concurrency locks and rate limits over Redis, and the delay of a deferred job. */
export * from './lock-spec.js';
export * from './keyed-semaphore.js';
export * from './rate-limiter.js';
export * from './defer-delay.js';
