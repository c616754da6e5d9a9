/** In-memory fakes of the identity plane's ports, and builders of the four kinds and of a credential order. */
export * from './cluster';
export * from './keystone';
export * from './objects';
export * from './world';


