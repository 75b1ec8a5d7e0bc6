/**
 * The console's only way to the server: the HTTP API, with the token the person signed in with
 * (kept for this browser tab's session in sessionStorage), or none, when the server needs none
 * or a proxy in front of it adds the header. Errors come back as {@link ApiError}s with the API's
 * stable code, message and hint.
 */
import { signal } from '@preact/signals';

const KEY = 'dirigent.token';

/** The token in use ('' for none); a change re-renders whoever reads it. */
export const token = signal<string>(sessionStorage.getItem(KEY) ?? '');
/** Whether the server refused the token (or asked for one): the sign-in form shows. */
export const signInNeeded = signal(false);

/** Keeps `value` as the token for this tab's session ('' forgets it). */
export function setToken(value: string): void {
  if (value === '') sessionStorage.removeItem(KEY);
  else sessionStorage.setItem(KEY, value);
  token.value = value;
  signInNeeded.value = false;
}

/** An error answer of the API. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly hint?: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }
}

/** The headers of every request: the token, when there is one. */
export function authHeaders(): Record<string, string> {
  return token.value === '' ? {} : { authorization: `Bearer ${token.value}` };
}

/** Calls the API: the JSON answer, or an {@link ApiError}. */
export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      headers: {
        accept: 'application/json',
        ...authHeaders(),
        ...(body !== undefined && { 'content-type': 'application/json' }),
      },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
  } catch (err) {
    throw new ApiError(0, 'NETWORK', `The server did not answer: ${(err as Error).message}`);
  }
  const text = await res.text();
  let json: unknown;
  try {
    json = text === '' ? null : JSON.parse(text);
  } catch {
    json = null;
  }
  if (res.ok) return json as T;
  if (res.status === 401) signInNeeded.value = true;
  const e = (
    json as {
      error?: { code: string; message: string; hint?: string; details?: Record<string, unknown> };
    } | null
  )?.error;
  throw new ApiError(
    res.status,
    e?.code ?? `HTTP_${res.status}`,
    e?.message ?? res.statusText,
    e?.hint,
    e?.details,
  );
}

/** A query string of the defined values of `params`. */
export function query(params: Record<string, string | number | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s === '' ? '' : `?${s}`;
}
