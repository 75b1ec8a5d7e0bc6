/** Where the generated part sits in docs/cli.md. */
export declare const CLI_MARKERS: { begin: string; end: string };
/** The path of docs/cli.md. */
export declare const CLI_PAGE: string;
/** The built CLI the page is generated from. */
export declare const CLI_MAIN: string;
/** The names of the commands a help text lists under "Commands:" (`help` left out). */
export declare function commandsOf(help: string): string[];
/** Every command's help, depth first: `[words after dirigent, help text]`. */
export declare function allHelp(cliMain?: string): Promise<[string[], string][]>;
/** The generated reference: a table of every command, then each command's help. */
export declare function cliReference(helps: [string[], string][]): string;
/** `page` with `reference` between the markers. */
export declare function withCliReference(page: string, reference: string): string;
/** The page as Prettier writes it with the repository's settings. */
export declare function formatPage(text: string, file?: string): Promise<string>;
