/** A run's or a step's status as a coloured word (the colour repeats the word, never replaces it). */
export function StatusBadge({ status, title }: { status: string; title?: string }) {
  return (
    <span class={`badge st-${status}`} title={title}>
      {status}
    </span>
  );
}
