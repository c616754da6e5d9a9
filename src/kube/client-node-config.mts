/**
 * What `@kubernetes/client-node`'s dist/config.js imports from the library's generated index, and nothing else: the
 * module client-node.ts hands config.js instead of that index, which loads every generated API class and model.
 */
export { createConfiguration } from '@kubernetes/client-node/dist/gen/configuration.js';
export { ServerConfiguration } from '@kubernetes/client-node/dist/gen/servers.js';
