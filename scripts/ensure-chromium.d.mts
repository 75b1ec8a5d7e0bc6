/** Where Debian's `chromium` package puts the browser. */
export declare const CHROMIUM: '/usr/bin/chromium';
/** The command that installs it, as root on Debian. */
export declare const INSTALL: string;
/**
 * Returns {@link CHROMIUM} once Chromium is there: at once, or after installing it with apt (as
 * root); otherwise throws an error whose message says what to run.
 */
export declare function ensureChromium(options?: { log?: (line: string) => void }): string;
/** Vitest's globalSetup hook. */
export declare function setup(): void;
