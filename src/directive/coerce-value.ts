import type { InputType } from './ast.js';

/**
 * Coerces a string from the command line or a `default` attribute to a declared input type:
 * numbers and booleans from their text, arrays and objects from JSON. Non-strings pass through.
 */
export function coerceValue(
  raw: unknown,
  type: InputType,
): { ok: true; value: unknown } | { ok: false } {
  if (typeof raw !== 'string') return { ok: true, value: raw };
  switch (type) {
    case 'string':
      return { ok: true, value: raw };
    case 'integer':
    case 'number': {
      const n = Number(raw.trim());
      if (raw.trim() === '' || !Number.isFinite(n) || (type === 'integer' && !Number.isInteger(n)))
        return { ok: false };
      return { ok: true, value: n };
    }
    case 'boolean':
      if (/^(true|1|yes)$/i.test(raw.trim())) return { ok: true, value: true };
      if (/^(false|0|no)$/i.test(raw.trim())) return { ok: true, value: false };
      return { ok: false };
    case 'array':
    case 'object':
      try {
        const v: unknown = JSON.parse(raw);
        const isArray = Array.isArray(v);
        if (type === 'array' ? isArray : v !== null && typeof v === 'object' && !isArray)
          return { ok: true, value: v };
        return { ok: false };
      } catch {
        return { ok: false };
      }
  }
}
