export * from './directory';
export * from './memory';
