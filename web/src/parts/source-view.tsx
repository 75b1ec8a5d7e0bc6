/** A directive's text with line numbers, one line marked (a step, or where an error is). */
import { useEffect, useRef } from 'preact/hooks';

/** How the text is shown. */
export interface SourceProps {
  file: string;
  text: string;
  /** The line to mark and scroll to (1-based). */
  line?: number;
  /** Why the line is marked: `error` or `step`. */
  mark?: 'error' | 'step';
}

/** See the module comment. */
export function SourceView({ file, text, line, mark = 'step' }: SourceProps) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current?.querySelector<HTMLElement>('.marked');
    if (el && box.current) box.current.scrollTop = el.offsetTop - box.current.clientHeight / 3;
  }, [line, text]);
  const lines = text.split('\n');
  return (
    <figure class="source">
      <figcaption class="mono small">
        {file}
        {line !== undefined && `:${line}`}
      </figcaption>
      <div class="source-lines" ref={box} tabIndex={0} aria-label={`${file}, the directive's text`}>
        {lines.map((l, i) => (
          <div class={i + 1 === line ? `marked ${mark}` : undefined} data-line={i + 1}>
            <span class="ln" aria-hidden="true">
              {i + 1}
            </span>
            <code>{l === '' ? ' ' : l}</code>
          </div>
        ))}
      </div>
    </figure>
  );
}
