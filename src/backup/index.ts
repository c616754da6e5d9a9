export * from './openbao';
