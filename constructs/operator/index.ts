export * from './operator';
export * from './props';
