export * from './run';
export * from './observe';
export * from './control-plane';
export * from './project';
export * from './user';
export * from './role-assignment';
export * from './memo';
