/**
 * A virtualised list for Preact on @tanstack/virtual-core: only the rows in view (and a few more)
 * are drawn, so a list of 10,000 runs costs what a list of 40 does.
 */
import {
  elementScroll,
  observeElementOffset,
  observeElementRect,
  Virtualizer,
} from '@tanstack/virtual-core';
import type { RefObject } from 'preact';
import { useLayoutEffect, useReducer, useState } from 'preact/hooks';

/** The virtualiser of `count` rows of `rowHeight` px in the scrolling element `scroller`. */
export function useVirtual(
  count: number,
  rowHeight: number,
  scroller: RefObject<HTMLElement | null>,
): Virtualizer<HTMLElement, Element> {
  const [, redraw] = useReducer((n: number) => n + 1, 0);
  const [virtualizer] = useState(
    () =>
      new Virtualizer<HTMLElement, Element>({
        count,
        getScrollElement: () => scroller.current,
        estimateSize: () => rowHeight,
        overscan: 12,
        observeElementRect,
        observeElementOffset,
        scrollToFn: elementScroll,
        onChange: () => redraw(undefined),
      }),
  );
  virtualizer.setOptions({ ...virtualizer.options, count, estimateSize: () => rowHeight });
  useLayoutEffect(() => virtualizer._didMount(), [virtualizer]);
  useLayoutEffect(() => {
    virtualizer._willUpdate();
  });
  return virtualizer;
}
