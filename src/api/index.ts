export * from './conditions';
export * from './defaults';
export * from './duration';
export * from './naming';
export * from './rules';
export * from './types';
export * from './validation';
export * from './time';
