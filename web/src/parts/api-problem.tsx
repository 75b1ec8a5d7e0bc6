/**
 * What went wrong, as the API said it: its stable code, its message and its hint, each as text.
 * Anything else thrown (a value that is not JSON, say) is shown by its message.
 */
import { ApiError } from '../api';

/** See the module comment. */
export function ApiProblem({ error }: { error: unknown }) {
  if (error === undefined) return null;
  if (!(error instanceof ApiError))
    return (
      <p class="error" role="alert">
        {error instanceof Error ? error.message : String(error)}
      </p>
    );
  return (
    <p class="error problem" role="alert" data-code={error.code}>
      <strong class="mono">{error.code}</strong> {error.message}
      {error.hint && <span class="hint">{error.hint}</span>}
    </p>
  );
}

/** The code, message and hint of an error as one line of text. */
export function problemText(error: unknown): string {
  if (error instanceof ApiError)
    return `${error.code}: ${error.message}${error.hint ? ` ${error.hint}` : ''}`;
  return error instanceof Error ? error.message : String(error);
}
