/** Collects a repeatable option's values (`-i a=1 -i b=2`) into an array, in order. */
export const collect = (value: string, previous: string[]): string[] => [...previous, value];
