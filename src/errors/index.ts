export * from './error-codes.js';
export * from './dirigent-error.js';
export * from './source-location.js';
export * from './did-you-mean.js';
