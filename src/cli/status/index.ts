export * from '../cluster';
export * from './collect';
export * from './columns';
export * from './command';
export * from './render';
