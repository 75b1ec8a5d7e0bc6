/**
 * A run's directive drawn as its compiled machine: steps as boxes coloured by their state (and
 * named: the colour repeats the word), parallel blocks and branches as frames, edges with their
 * conditions, `on_error` edges dashed. A step's compensation (`compensate:NAME`) is a box of its
 * own beside it, its border and `undo` edge dotted, coloured once it runs. Each step can be
 * chosen with the mouse or the keyboard.
 */
import { useMemo } from 'preact/hooks';
import type { DirectiveGraph, StepRecord } from '../types';
import { layOut, type PlacedEdge, type PlacedNode } from './graph-layout';

/** How the graph is drawn. */
export interface GraphViewProps {
  graph: DirectiveGraph;
  /** Each step's latest pass, by name. */
  steps: Record<string, StepRecord>;
  /** The run's own status (colours start and end). */
  runStatus: string;
  selected?: string;
  onSelect?: (step: string) => void;
}

/** A node's state: its step's, `pending` before it ran. */
export function stateOf(
  n: PlacedNode | { kind: string; step?: string },
  steps: Record<string, StepRecord>,
  runStatus: string,
): string {
  if (n.kind === 'start') return 'completed';
  if (n.kind === 'end') return runStatus === 'completed' ? 'completed' : 'pending';
  return (n.step !== undefined && steps[n.step]?.status) || 'pending';
}

/** See the module comment. */
export function GraphView({ graph, steps, runStatus, selected, onSelect }: GraphViewProps) {
  const laid = useMemo(() => layOut(graph), [graph]);
  const byId = useMemo(() => new Map(laid.nodes.map((n) => [n.id, n])), [laid]);
  return (
    <div class="graph-scroll">
      <svg
        class="graph"
        width={laid.width}
        height={laid.height}
        viewBox={`0 0 ${laid.width} ${laid.height}`}
        role="group"
        aria-label="The directive's steps"
        data-testid="graph"
      >
        <defs>
          <marker
            id="arrow"
            viewBox="0 0 10 10"
            refX="9"
            refY="5"
            markerWidth="7"
            markerHeight="7"
            orient="auto-start-reverse"
          >
            <path d="M 0 0 L 10 5 L 0 10 z" class="arrow" />
          </marker>
        </defs>
        {laid.clusters.map((c) => (
          <g
            class={`cluster ${c.kind} st-${(steps[c.step]?.status as string | undefined) ?? 'pending'}`}
          >
            <rect
              x={c.x - c.width / 2}
              y={c.y - c.height / 2 - LABEL}
              width={c.width}
              height={c.height + LABEL}
              rx={8}
            />
            <text x={c.x - c.width / 2 + 8} y={c.y - c.height / 2 - LABEL + 13}>
              {c.kind === 'branch' ? `branch ${c.label}` : c.label}
            </text>
          </g>
        ))}
        {laid.edges.map((e) => (
          <g class={`edge ${e.kind}`}>
            <path d={pathOf(e, byId)} marker-end="url(#arrow)" />
            {e.label !== undefined && labelAt(e, byId) && (
              <text
                x={labelAt(e, byId)!.x}
                y={labelAt(e, byId)!.y + 4}
                text-anchor={e.from === e.to ? 'start' : 'middle'}
              >
                {e.label.length > 34 ? `${e.label.slice(0, 33)}…` : e.label}
              </text>
            )}
          </g>
        ))}
        {laid.nodes.map((n) => {
          const state = stateOf(n, steps, runStatus);
          const step = n.step;
          const choose = step !== undefined && onSelect ? () => onSelect(step) : undefined;
          const attempts = step !== undefined ? (steps[step]?.attempts ?? 0) : 0;
          // Steps and compensations are boxes with a detail line; the rest are small labels.
          const boxed = n.kind === 'step' || n.kind === 'compensate';
          return (
            <g
              class={`node ${n.kind} st-${state}${step !== undefined && step === selected ? ' selected' : ''}`}
              data-step={step}
              data-state={state}
              transform={`translate(${n.x - n.width / 2},${n.y - n.height / 2})`}
              {...(choose && {
                // SVG's attribute is lower-case (setAttribute keeps the case on SVG elements).
                tabindex: 0,
                role: 'button',
                'aria-label': `${n.kind === 'step' ? 'step' : n.kind === 'compensate' ? 'compensation' : n.kind} ${n.label}: ${state}`,
                'aria-pressed': step === selected,
                onClick: choose,
                onKeyDown: (e: KeyboardEvent) => {
                  if (e.key === 'Enter' || e.key === ' ') {
                    e.preventDefault();
                    choose();
                  }
                },
              })}
            >
              <title>{`${n.label}${n.detail ? ` — ${n.detail}` : ''}: ${state}${attempts > 1 ? `, ${attempts} attempts` : ''}`}</title>
              {n.action === 'foreach' && (
                <rect class="stack" x={4} y={-4} width={n.width} height={n.height} rx={6} />
              )}
              <rect width={n.width} height={n.height} rx={boxed ? 6 : 13} />
              <text
                x={boxed ? 10 : n.width / 2}
                y={boxed ? 19 : 17}
                text-anchor={boxed ? 'start' : 'middle'}
                class="label"
              >
                {clip(n.label, n.width)}
              </text>
              {boxed && (
                <text x={10} y={36} class="detail">
                  {clip(`${n.detail ?? ''}${attempts > 1 ? ` · ${attempts} tries` : ''}`, n.width)}
                </text>
              )}
            </g>
          );
        })}
      </svg>
    </div>
  );
}

/** Room above a frame's contents for its name. */
const LABEL = 14;

/** An edge's path: dagre's points, or a loop on the right of its node when it returns to it. */
function pathOf(e: PlacedEdge, byId: Map<string, PlacedNode>): string {
  const n = byId.get(e.from);
  if (e.from === e.to && n) {
    const x = n.x + n.width / 2;
    return `M${x},${n.y - 8} C${x + 40},${n.y - 30} ${x + 40},${n.y + 30} ${x + 2},${n.y + 8}`;
  }
  return e.points.map((p, i) => `${i === 0 ? 'M' : 'L'}${p.x},${p.y}`).join(' ');
}

/** Where an edge's condition is written: dagre's place, or beside a loop back to its node. */
function labelAt(
  e: PlacedEdge,
  byId: Map<string, PlacedNode>,
): { x: number; y: number } | undefined {
  const n = byId.get(e.from);
  if (e.from === e.to && n) return { x: n.x + n.width / 2 + 36, y: n.y };
  return e.labelAt;
}

function clip(text: string, width: number): string {
  const max = Math.floor((width - 16) / 6.6);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
