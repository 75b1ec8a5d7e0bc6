/**
 * A check that accepts, without ajv, parameters that ajv would accept unchanged but for the
 * defaults it fills, for the plain schemas most built-in tools have: an object of strings,
 * numbers and booleans, each optionally bounded and defaulted, and string maps. It never rejects:
 * what it does not take for sure (a type to coerce, a keyword it does not know, a bound too close
 * to call) is left to ajv, which validates, coerces and reports as ever. A one-step run whose
 * parameters it accepts does not load ajv.
 */

type Schema = Record<string, unknown>;

/** The keywords that bound a property's value. */
const BOUND_KEYWORDS = [
  'minLength',
  'maxLength',
  'minimum',
  'maximum',
  'propertyNames',
  'additionalProperties',
] as const;
/** The keywords of a property this check understands; any other sends the call to ajv. */
const PROPERTY_KEYWORDS = new Set<string>([
  'type',
  'description',
  'default',
  ...BOUND_KEYWORDS,
  'x-dirigent-syntax',
]);
const OBJECT_KEYWORDS = new Set([
  'type',
  'description',
  'properties',
  'required',
  'additionalProperties',
]);

/**
 * Whether `params` surely match `schema` as they are (no coercion needed); when so, the defaults
 * of missing properties are filled in place, as ajv's `useDefaults` does. `false` means "ask ajv",
 * not "invalid", and leaves `params` untouched.
 */
export function acceptSimpleParams(schema: object, params: Record<string, unknown>): boolean {
  const s = schema as Schema;
  if (s.type !== 'object' || !Object.keys(s).every((k) => OBJECT_KEYWORDS.has(k))) return false;
  if (s.additionalProperties !== false && s.additionalProperties !== undefined) return false;
  const properties = (s.properties ?? {}) as Record<string, Schema>;
  const required = (s.required ?? []) as unknown[];
  if (
    !Array.isArray(required) ||
    !required.every((r) => typeof r === 'string' && params[r] !== undefined)
  )
    return false;
  const defaults: [string, unknown][] = [];
  for (const [name, property] of Object.entries(properties)) {
    if (!Object.keys(property).every((k) => PROPERTY_KEYWORDS.has(k))) return false;
    const value = params[name];
    if (value === undefined) {
      if ('default' in property) defaults.push([name, property.default]);
      continue;
    }
    if (!Object.hasOwn(params, name) || !matches(property, value)) return false;
  }
  if (
    s.additionalProperties === false &&
    !Object.keys(params).every((k) => Object.hasOwn(properties, k))
  )
    return false;
  for (const [name, value] of defaults) params[name] = structuredClone(value);
  return true;
}

/** Whether `value` surely matches the property's schema (`false`: not sure). */
function matches(property: Schema, value: unknown): boolean {
  switch (property.type) {
    case 'string':
      return typeof value === 'string' && stringFits(property, value);
    case 'integer':
      return Number.isSafeInteger(value) && numberFits(property, value as number);
    case 'number':
      return Number.isFinite(value) && numberFits(property, value as number);
    case 'boolean':
      return typeof value === 'boolean' && !hasBounds(property);
    case 'object':
      return stringMapFits(property, value);
    default:
      return false;
  }
}

function hasBounds(p: Schema): boolean {
  return BOUND_KEYWORDS.some((k) => k in p);
}

/**
 * ajv counts code points; a string has between `length / 2` and `length` of them, so a bound is
 * met for sure when it is met by both counts.
 */
function stringFits(p: Schema, s: string): boolean {
  if ('minimum' in p || 'maximum' in p || 'propertyNames' in p || 'additionalProperties' in p)
    return false;
  const { minLength, maxLength } = p;
  if (minLength !== undefined && !(typeof minLength === 'number' && s.length / 2 >= minLength))
    return false;
  return maxLength === undefined || (typeof maxLength === 'number' && s.length <= maxLength);
}

function numberFits(p: Schema, n: number): boolean {
  if ('minLength' in p || 'maxLength' in p || 'propertyNames' in p || 'additionalProperties' in p)
    return false;
  const { minimum, maximum } = p;
  if (minimum !== undefined && !(typeof minimum === 'number' && n >= minimum)) return false;
  return maximum === undefined || (typeof maximum === 'number' && n <= maximum);
}

/** A map of strings (`additionalProperties: { type: 'string' }`), its keys matching `propertyNames.pattern`. */
function stringMapFits(p: Schema, value: unknown): boolean {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  if (Object.getPrototypeOf(value) !== Object.prototype) return false;
  if ('minLength' in p || 'maxLength' in p || 'minimum' in p || 'maximum' in p) return false;
  const extra = p.additionalProperties as Schema | undefined;
  if (extra === undefined || Object.keys(extra).length !== 1 || extra.type !== 'string')
    return false;
  const names = p.propertyNames as Schema | undefined;
  if (names !== undefined && (Object.keys(names).length !== 1 || typeof names.pattern !== 'string'))
    return false;
  const pattern = names === undefined ? undefined : new RegExp(names.pattern as string, 'u');
  return Object.entries(value).every(
    ([k, v]) => typeof v === 'string' && (pattern === undefined || pattern.test(k)),
  );
}
