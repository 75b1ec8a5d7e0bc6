/**
 * Lays a directive's graph out with dagre (compound: a parallel block and its branches are boxes
 * around their steps), top to bottom, in pixels.
 */
import { graphlib, layout } from '@dagrejs/dagre';
import type { DirectiveGraph, GraphCluster, GraphEdge, GraphNode } from '../types';

/** A node with its place: centre `x`, `y`. */
export type PlacedNode = GraphNode & { x: number; y: number; width: number; height: number };
/** A box with its place: centre `x`, `y`. */
export type PlacedCluster = GraphCluster & { x: number; y: number; width: number; height: number };
/** An edge with its path and where its label goes. */
export type PlacedEdge = GraphEdge & {
  points: { x: number; y: number }[];
  labelAt?: { x: number; y: number };
};

/** A laid-out graph and its size. */
export interface Layout {
  nodes: PlacedNode[];
  clusters: PlacedCluster[];
  edges: PlacedEdge[];
  width: number;
  height: number;
}

function sizeOf(n: GraphNode): { width: number; height: number } {
  if (n.kind === 'step' || n.kind === 'compensate')
    return {
      width: Math.max(
        150,
        Math.min(260, 24 + 7 * Math.max(n.label.length, (n.detail ?? '').length * 0.85)),
      ),
      height: 46,
    };
  if (n.kind === 'fork' || n.kind === 'join') return { width: 110, height: 26 };
  return { width: 64, height: 28 };
}

/** See the module comment. */
export function layOut(graph: DirectiveGraph): Layout {
  const g = new graphlib.Graph({ compound: true, multigraph: true });
  g.setGraph({ rankdir: 'TB', nodesep: 28, ranksep: 36, edgesep: 12, marginx: 12, marginy: 12 });
  for (const c of graph.clusters) {
    g.setNode(c.id, { label: c.label, width: 0, height: 0, paddingTop: 26 } as never);
    if (c.cluster !== undefined) g.setParent(c.id, c.cluster);
  }
  for (const n of graph.nodes) {
    g.setNode(n.id, sizeOf(n));
    if (n.cluster !== undefined) g.setParent(n.id, n.cluster);
  }
  graph.edges.forEach((e, i) => {
    const label =
      e.label === undefined
        ? {}
        : { width: Math.min(220, e.label.length * 6.2 + 8), height: 16, labelpos: 'c' as const };
    g.setEdge(e.from, e.to, { ...label, minlen: 1 }, `e${i}`);
  });
  layout(g);
  const at = (id: string) => g.node(id) as { x: number; y: number; width: number; height: number };
  const size = g.graph() as { width?: number; height?: number };
  return {
    nodes: graph.nodes.map((n) => ({ ...n, ...pick(at(n.id)) })),
    clusters: graph.clusters.map((c) => ({ ...c, ...pick(at(c.id)) })),
    edges: graph.edges.map((e, i) => {
      const placed = g.edge(e.from, e.to, `e${i}`) as {
        points?: { x: number; y: number }[];
        x?: number;
        y?: number;
      };
      return {
        ...e,
        points: placed.points ?? [],
        ...(placed.x !== undefined &&
          placed.y !== undefined && { labelAt: { x: placed.x, y: placed.y } }),
      };
    }),
    width: size.width ?? 0,
    height: size.height ?? 0,
  };
}

function pick(n: { x: number; y: number; width: number; height: number }) {
  return { x: n.x, y: n.y, width: n.width, height: n.height };
}
