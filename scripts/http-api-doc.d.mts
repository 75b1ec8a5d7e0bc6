/** Where the generated part sits in docs/http-api.md. */
export declare const HTTP_API_MARKERS: { begin: string; end: string };
/** The path of docs/http-api.md. */
export declare const HTTP_API_PAGE: string;
/**
 * The generated reference of docs/http-api.md from an OpenAPI document: every route, its
 * parameters, body and answers, the shapes they name, and the status of every error code.
 */
export declare function httpApiReference(
  doc: object,
  statusOf: (code: string) => number,
  codes: readonly string[],
): string;
/** `page` with `reference` between the markers. */
export declare function withHttpApiReference(page: string, reference: string): string;
/** The page as Prettier writes it with the repository's settings. */
export declare function formatPage(text: string, file?: string): Promise<string>;
/** The OpenAPI document of a server built in this process over an empty embedded project. */
export declare function openApiDocument<D extends { close(): Promise<void> }>(api: {
  Dirigent: { open(options: { project: string }): Promise<D> };
  buildApi(
    dirigent: D,
    options: { tokens: string[] },
  ): Promise<{ ready(): PromiseLike<unknown>; swagger(): unknown; close(): PromiseLike<unknown> }>;
}): Promise<{ paths: Record<string, Record<string, unknown>> } & Record<string, unknown>>;
