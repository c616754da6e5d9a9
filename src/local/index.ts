export * from './directory';
export * from './memory';
export * from './ports';
