/**
 * RYE keeps `<template>`, `<example>` and `<raw>` opaque: their content is text, whatever it
 * holds. Before any parser sees the XML, each `<` and `&` inside them becomes a private-use
 * character (one for one, so every offset stays that of the file), and {@link unmask} turns them
 * back in the text and attribute values the reader produces.
 */

/** Stands for a `<` that must stay text. */
export const MASKED_LT = '\uE000';
/** Stands for a `&` that must stay text. */
export const MASKED_AMP = '\uE001';

const OPAQUE_TAGS = ['template', 'example', 'raw'];
const OPAQUE = OPAQUE_TAGS.map(
  (tag) => [`<${tag}`, new RegExp(`(<${tag}(?:\\s[^>]*)?>)([\\s\\S]*?)(</${tag}>)`, 'g')] as const,
);

/** `text` with the content of its opaque elements masked (same length). */
export function maskOpaque(text: string): string {
  let out = text;
  for (const [opener, re] of OPAQUE) {
    if (!out.includes(opener)) continue;
    out = out.replace(re, (_m, open, body, close) => {
      return open + String(body).replaceAll('<', MASKED_LT).replaceAll('&', MASKED_AMP) + close;
    });
  }
  return out;
}

/** Whether `text` holds a masked character. */
export function hasMasked(text: string): boolean {
  return text.includes(MASKED_LT) || text.includes(MASKED_AMP);
}

/** `text` with masked characters turned back into `<` and `&`. */
export function unmask(text: string): string {
  return hasMasked(text) ? text.replaceAll(MASKED_LT, '<').replaceAll(MASKED_AMP, '&') : text;
}
