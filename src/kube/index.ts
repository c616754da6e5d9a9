export * from './cluster';
export * from './errors';
export * from './identity';
export * from './json';
export * from './kinds';
export * from './memory';
export * from './object';
export * from './store';
