import type { SpaceName } from '../items/space.js';
import type { BootstrapSpec } from './bootstrap-spec.js';

/** A tool a worker starts by itself: enabled, with mode `once` or `continuous`. */
export interface BootstrapTool {
  itemId: string;
  /** The file that won resolution (a higher space's tool shadows a lower one's). */
  file: string;
  space: SpaceName;
  /** Content hash of {@link file} (`itemHash`): a `once` tool runs once per hash. */
  hash: string;
  spec: BootstrapSpec & { mode: 'once' | 'continuous' };
}
