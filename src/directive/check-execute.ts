/**
 * Checks of an `<execute>`: its item and parameters name known data, values that become code are
 * reported, and the directive's `<permissions>` grant what it runs.
 */
import { ErrorCode } from '../errors/error-codes.js';
import type { SourceLocation } from '../errors/source-location.js';
import { compileTemplate, type TemplateSlot } from '../expr/template.js';
import type { ParamSpec } from './action.js';
import { isGranted, requiredCapability } from './capabilities.js';
import { checkCodeValues } from './check-code-values.js';
import { checkTemplate, checkValue, type Where } from './check-value.js';
import type { ValidationContext } from './validation-context.js';

/**
 * Checks an execution of `itemType` `itemId` with `params`, written at `loc`, as seen from
 * `where` (a foreach's variables, the result of the step a compensation undoes).
 */
export function checkExecute(
  itemType: 'tool' | 'directive',
  itemId: string,
  params: readonly ParamSpec[],
  loc: SourceLocation,
  ctx: ValidationContext,
  where: Where,
): void {
  checkTemplate(itemId, loc, ctx, where);
  for (const p of params) checkValue(p.value, p.loc, ctx, where);
  const literal = !itemId.includes('{');
  if (!literal && slotsOf(itemId)?.some((slot) => slot.envName === undefined)) {
    const message = `The ${itemType} this step runs is chosen by a value ("${itemId}"): whoever supplies it chooses what runs`;
    const hint = `Name the ${itemType} in the directive and choose among a few with <when> conditions.`;
    if (ctx.checks.strict)
      ctx.diag.error(
        ErrorCode.VALUE_AS_CODE,
        `${message} (refused: the project is in strict mode).`,
        loc,
        hint,
      );
    else ctx.diag.warn(ErrorCode.VALUE_AS_CODE, `${message}.`, loc, hint);
  }
  if (literal && itemType === 'tool') {
    for (const p of params) {
      if (p.value.kind !== 'template' && p.value.kind !== 'deep') continue;
      if (p.value.kind === 'deep' && typeof p.value.value !== 'string') continue;
      const source = p.value.kind === 'template' ? p.value.source : (p.value.value as string);
      checkCodeValues(
        {
          itemId,
          param: p.name,
          source,
          syntax: ctx.checks.syntaxOf(itemId, p.name),
          loc: p.loc,
          allowOptions: p.allowOptions === true,
        },
        ctx,
      );
    }
  }
  // A warning, not an error: the step may never run (a condition may skip it), and RYE's own test
  // directives exist to be denied. Running the step fails with PERMISSION_DENIED.
  if (
    literal &&
    ctx.d.permissions !== undefined &&
    !isGranted(ctx.d.permissions, requiredCapability(itemType, itemId))
  ) {
    ctx.diag.warn(
      ErrorCode.PERMISSION_DENIED,
      `The directive's <permissions> do not grant executing ${itemType} "${itemId}" (needs ${requiredCapability(itemType, itemId)}); this step will fail when it runs.`,
      loc,
      `Add <execute><${itemType}>${itemId.replaceAll('/', '.')}</${itemType}></execute> to <permissions>, or a wildcard that covers it.`,
    );
  }
}

/** The slots of a template, or undefined when it does not compile (reported by {@link checkValue}). */
function slotsOf(source: string): readonly TemplateSlot[] | undefined {
  try {
    return compileTemplate(source).slots;
  } catch {
    return undefined;
  }
}
