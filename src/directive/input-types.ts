/** The types a value may be declared with: an `<input>`'s, an `<answer>`'s. */
export const INPUT_TYPES = ['string', 'integer', 'number', 'boolean', 'array', 'object'] as const;
/** One of {@link INPUT_TYPES}. */
export type InputType = (typeof INPUT_TYPES)[number];
