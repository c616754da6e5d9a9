export * from './decide';
export * from './model';
export * from './ownership';
export * from './ports';
export * from './recorded';
export * as rotation from './rotation';
export * from './runner';
export * from './secret';
export * from './settled';
