/** A web page as a person (or a model) reads it: Markdown or plain text, without its code. */
import type * as NodeHtmlMarkdownPackage from 'node-html-markdown';
import type * as NodeHtmlParserPackage from 'node-html-parser';
import { lazyPackage } from '../lazy-package.js';

const nhm = lazyPackage<typeof NodeHtmlMarkdownPackage>('node-html-markdown');
const parser = lazyPackage<typeof NodeHtmlParserPackage>('node-html-parser');

/** Elements whose content is code, decoration or the title (given apart), never text to read. */
const NOT_TEXT = [
  'script',
  'style',
  'noscript',
  'template',
  'svg',
  'canvas',
  'iframe',
  'object',
  'head',
  'title',
];

let markdown: NodeHtmlMarkdownPackage.NodeHtmlMarkdown | undefined;

/** The page's title and its body as `format`: Markdown (node-html-markdown) or plain text. */
export function htmlToReadable(
  html: string,
  format: 'markdown' | 'text',
): { title: string | undefined; content: string } {
  const root = parser().parse(html);
  const title = root.querySelector('title')?.text.trim() || undefined;
  if (format === 'markdown') {
    markdown ??= new (nhm().NodeHtmlMarkdown)({ ignore: NOT_TEXT, maxConsecutiveNewlines: 2 });
    return { title, content: markdown.translate(html).trim() };
  }
  const body = root.querySelector('body') ?? root;
  for (const el of body.querySelectorAll(NOT_TEXT.join(','))) el.remove();
  return { title, content: body.structuredText.trim() };
}
