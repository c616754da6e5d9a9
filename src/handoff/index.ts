export * from './annotations';
export * from './decide';
export * from './ports';
export * from './workload';
