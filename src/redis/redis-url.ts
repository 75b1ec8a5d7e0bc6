/**
 * The Redis URL to use: the explicit `--redis` value, else `REDIS_URL`, else none (the engine
 * then runs embedded). Empty strings count as unset.
 */
export function redisUrl(
  explicit?: string,
  env: Record<string, string | undefined> = process.env,
): string | undefined {
  if (explicit !== undefined && explicit !== '') return explicit;
  const fromEnv = env.REDIS_URL;
  return fromEnv !== undefined && fromEnv !== '' ? fromEnv : undefined;
}
