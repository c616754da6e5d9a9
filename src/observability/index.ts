export * from './alerts';
export * from './dashboard';
