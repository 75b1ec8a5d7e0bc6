/**
 * Every relative link of README.md and docs/**\/*.md leads somewhere: to a file or folder inside
 * the repository, and, with an `#anchor`, to a heading of that file (GitHub's anchors). Links to
 * other sites are not followed. A fixture with broken links shows that the check finds them.
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
} from 'node:fs';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/paths.js';

/** One link of a Markdown file, and the line it is on. */
interface Link {
  file: string;
  line: number;
  target: string;
}

/** The Markdown files checked: README.md and every `.md` under docs/, relative to `root`. */
function markdownFiles(root: string): string[] {
  const docs = join(root, 'docs');
  const inDocs = existsSync(docs)
    ? readdirSync(docs, { recursive: true, withFileTypes: true })
        .filter((e) => e.isFile() && e.name.endsWith('.md'))
        .map((e) => relative(root, join(e.parentPath, e.name)).split(sep).join('/'))
    : [];
  return ['README.md', ...inDocs.sort()];
}

/**
 * The lines of `text` that are not inside fenced code blocks (``` or ~~~, three or more), with
 * inline code spans blanked out unless `keepCode`; lines inside blocks are empty, so line numbers
 * stay.
 */
function proseLines(text: string, { keepCode = false } = {}): string[] {
  let fence: string | undefined;
  return text.split('\n').map((line) => {
    const marker = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence === undefined && marker !== undefined) {
      fence = marker;
      return '';
    }
    if (fence !== undefined) {
      if (marker !== undefined && marker[0] === fence[0] && marker.length >= fence.length)
        fence = undefined;
      return '';
    }
    return keepCode ? line : line.replace(/(`+)[\s\S]*?\1/g, (code) => ' '.repeat(code.length));
  });
}

/** The link targets of a Markdown text: inline links and images, reference definitions, HTML. */
function linksOf(file: string, text: string): Link[] {
  const links: Link[] = [];
  proseLines(text).forEach((line, i) => {
    const add = (target: string) => links.push({ file, line: i + 1, target: target.trim() });
    for (const m of line.matchAll(/\]\(\s*(<[^>]*>|[^()\s]*(?:\([^()\s]*\)[^()\s]*)*)/g))
      add(m[1]!.replace(/^<|>$/g, ''));
    const definition = /^ {0,3}\[[^\]]+\]:\s*(\S+)/.exec(line);
    if (definition) add(definition[1]!.replace(/^<|>$/g, ''));
    for (const m of line.matchAll(/<(?:a|img)\s[^>]*?(?:href|src)="([^"]*)"/gi)) add(m[1]!);
  });
  return links;
}

/** GitHub's anchor of a heading: its text as shown, lower case, punctuation dropped, spaces as `-`. */
function slugOf(heading: string): string {
  const shown = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/`/g, '')
    .replace(/\*/g, '')
    .trim();
  return shown
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors of a Markdown text's headings (ATX and setext), duplicates numbered as GitHub does. */
function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const lines = proseLines(text, { keepCode: true });
  lines.forEach((line, i) => {
    const atx = /^ {0,3}#{1,6}\s+(.*?)(?:\s+#+\s*)?$/.exec(line)?.[1];
    const next = lines[i + 1] ?? '';
    const setext = line.trim() !== '' && /^ {0,3}(=+|-+)\s*$/.test(next) && !/^\s*[-*|]/.test(line);
    const heading = atx ?? (setext ? line : undefined);
    if (heading === undefined) return;
    const slug = slugOf(heading);
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  });
  // Explicit anchors: <a name="…"> and id="…".
  for (const m of text.matchAll(/<a\s[^>]*?(?:name|id)="([^"]+)"/gi)) anchors.add(m[1]!);
  return anchors;
}

/** What is wrong with each broken relative link of the checked files under `root`. */
function brokenLinks(root: string): string[] {
  const problems: string[] = [];
  const texts = new Map<string, string>();
  const textOf = (path: string) => {
    if (!texts.has(path)) texts.set(path, readFileSync(path, 'utf8'));
    return texts.get(path)!;
  };
  for (const file of markdownFiles(root)) {
    const absolute = join(root, file);
    if (!existsSync(absolute)) continue;
    for (const link of linksOf(file, textOf(absolute))) {
      const where = `${link.file}:${link.line}: ${link.target}`;
      if (link.target === '') {
        problems.push(`${where}: empty link`);
        continue;
      }
      // Other sites (http:, https:, mailto:, …) are not followed.
      if (/^[a-z][a-z0-9+.-]*:/i.test(link.target) || link.target.startsWith('//')) continue;
      const hash = link.target.indexOf('#');
      const pathPart = hash === -1 ? link.target : link.target.slice(0, hash);
      const anchor = hash === -1 ? undefined : decodeURIComponent(link.target.slice(hash + 1));
      const target =
        pathPart === '' ? absolute : resolve(dirname(absolute), decodeURIComponent(pathPart));
      const inside = relative(root, target);
      if (inside.startsWith('..') || resolve(root, inside) !== target) {
        problems.push(`${where}: leads out of the repository`);
        continue;
      }
      if (!existsSync(target)) {
        problems.push(`${where}: no file ${inside.split(sep).join('/')}`);
        continue;
      }
      if (anchor === undefined || anchor === '') continue;
      if (statSync(target).isDirectory() || !target.endsWith('.md')) {
        problems.push(`${where}: an anchor into a file that is not Markdown`);
        continue;
      }
      if (!anchorsOf(textOf(target)).has(anchor))
        problems.push(`${where}: no heading #${anchor} in ${inside.split(sep).join('/')}`);
    }
  }
  return problems;
}

describe('the check of links', () => {
  const root = mkdtempSync(join(tmpdir(), 'dirigent-docs-links-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('finds a missing file, a missing heading and a link out of the repository', () => {
    mkdirSync(join(root, 'docs', 'deep'), { recursive: true });
    mkdirSync(join(root, 'examples'));
    writeFileSync(
      join(root, 'README.md'),
      [
        '# A project',
        '',
        'See [the guide](docs/guide.md), [its start](docs/guide.md#getting-started), the',
        '[examples](examples) and [this page](#a-project).',
        'Broken: [gone](docs/gone.md) and [no such part](docs/guide.md#no-such-part).',
        '![a picture](docs/missing.png) and [outside](../elsewhere.md).',
        'Not checked: [a site](https://example.com/x.md), `[code](nowhere.md)`.',
        '',
        '```md',
        '[in a block](nowhere.md)',
        '```',
      ].join('\n'),
    );
    writeFileSync(
      join(root, 'docs', 'guide.md'),
      [
        '# Guide',
        '',
        '## Getting started',
        '',
        '## `GET /v1/runs/{runId}`: a route',
        '',
        '## Twice',
        '',
        '## Twice',
        '',
        'Back [home](../README.md#a-project), [a route](#get-v1runsrunid-a-route),',
        '[the second](#twice-1) and [a third](#twice-2), [deeper](deep/page.md#top).',
        '',
        '[ref]: ./deep/page.md#nowhere',
      ].join('\n'),
    );
    writeFileSync(join(root, 'docs', 'deep', 'page.md'), 'Top\n===\n');

    expect(brokenLinks(root)).toEqual([
      'README.md:5: docs/gone.md: no file docs/gone.md',
      'README.md:5: docs/guide.md#no-such-part: no heading #no-such-part in docs/guide.md',
      'README.md:6: docs/missing.png: no file docs/missing.png',
      'README.md:6: ../elsewhere.md: leads out of the repository',
      'docs/guide.md:12: #twice-2: no heading #twice-2 in docs/guide.md',
      'docs/guide.md:14: ./deep/page.md#nowhere: no heading #nowhere in docs/deep/page.md',
    ]);
  });

  it('reads anchors as GitHub writes them', () => {
    expect(slugOf('Where the web tools may go: the network policy')).toBe(
      'where-the-web-tools-may-go-the-network-policy',
    );
    expect(slugOf('`POST /v1/runs/{runId}/cancel`')).toBe('post-v1runsrunidcancel');
    expect(slugOf('Retries, timeouts and on_error')).toBe('retries-timeouts-and-on_error');
    expect(slugOf('[Linked](x.md) *and* emphasised')).toBe('linked-and-emphasised');
  });
});

describe('README.md and docs/', () => {
  it('have only links that lead to a file of the repository and a heading in it', () => {
    const files = markdownFiles(REPO_ROOT);
    expect(files).toContain('README.md');
    expect(files.length).toBeGreaterThan(5);
    const links = files.flatMap((f) => linksOf(f, readFileSync(join(REPO_ROOT, f), 'utf8')));
    // Not vacuous: the pages link to each other, anchors included.
    expect(links.filter((l) => !/^[a-z]+:/i.test(l.target)).length).toBeGreaterThan(50);
    expect(links.some((l) => /\.md#/.test(l.target))).toBe(true);
    expect(brokenLinks(REPO_ROOT)).toEqual([]);
  });
});
