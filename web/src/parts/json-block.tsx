/** A value as text in a block: JSON indented, a string as it is. Never read as HTML. */
import { json } from '../format';

/** See the module comment. */
export function JsonBlock({ value, label }: { value: unknown; label?: string }) {
  const text = json(value);
  return (
    <pre class="json" tabIndex={0} aria-label={label}>
      {text === '' ? '—' : text}
    </pre>
  );
}
