/**
 * The Redis keys of bootstrap tools, under a deployment's key prefix. Item ids never hold `:`, so
 * the keys of two tools never collide.
 */
export const bootstrapKeys = {
  /**
   * `<prefix>:bootstrap:<itemId>:<hash>`: the claim, then the outcome, of a `once` tool's version
   * (a JSON `OnceRecord`, see once-record.ts; with a TTL while it runs, none once it ended).
   */
  once(prefix: string, itemId: string, hash: string): string {
    return `${prefix}:bootstrap:${itemId}:${hash}`;
  },
  /** `<prefix>:bootstrap-lease:<itemId>`: the lease of the one worker running a `continuous` tool. */
  continuous(prefix: string, itemId: string): string {
    return `${prefix}:bootstrap-lease:${itemId}`;
  },
};
