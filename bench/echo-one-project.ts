/**
 * A project of one directive, `echo-one`: one step calling `dirigent/util/echo` with `n`, templated
 * from the input, and the echoed `n` as its output: fast, so that what a run costs around its
 * tool shows.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const DIRECTIVE =
  '# echo-one\n\n```xml\n<directive name="echo-one" version="1.0.0">' +
  '<inputs><input name="n" type="integer" default="0"/></inputs>' +
  '<process><step name="echo"><execute item_type="tool" item_id="dirigent/util/echo">' +
  '<param name="n" value="${inputs.n}"/></execute></step></process>' +
  '<outputs><output name="n" value="${steps.echo.result.n}"/></outputs>' +
  '</directive>\n```\n';

/** Makes `root/name`, a project holding `echo-one`, and returns its path. */
export function echoOneProject(root: string, name: string): string {
  const project = join(root, name);
  mkdirSync(join(project, '.ai', 'directives'), { recursive: true });
  writeFileSync(join(project, '.ai', 'directives', 'echo-one.md'), DIRECTIVE);
  return project;
}
