/**
 * The dynamic provider object Pulumi serializes into the state (`__provider`). It holds no logic and captures nothing but
 * two module paths: each verb `require()`s the compiled implementation (`provider-impl`) at run time, by package name
 * (`keystone-appcred/pulumi/provider-impl`, an `exports` entry that exists for this and is not an API) from the
 * program's `node_modules` (the dynamic-provider host resolves modules from the program's directory; inside this
 * repository the package resolves itself by name), or else by the absolute path where this module was loaded from.
 * Serializing the project's own code by value breaks easily (closures over imports, helpers); a `require` does not.
 */
import { join } from 'node:path';
import type * as pulumi from '@pulumi/pulumi';
import type * as Impl from './provider-impl';
import type { ProviderInputs, ProviderOutputs } from './state';

/** The implementation by package name, as a Pulumi program that installed (or linked) `keystone-appcred` resolves it. */
const PACKAGE_IMPL = 'keystone-appcred/pulumi/provider-impl';
/** The implementation beside this module (a string by the time the closure is serialized). */
const LOCAL_IMPL = join(__dirname, 'provider-impl');

function impl(): typeof Impl {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require(PACKAGE_IMPL) as typeof Impl;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    // Not installed by that name, or an installed copy without the subpath; a module missing *inside* it is an error.
    const absent = (code === 'MODULE_NOT_FOUND' && String((error as Error).message).includes(PACKAGE_IMPL)) || code === 'ERR_PACKAGE_PATH_NOT_EXPORTED';
    if (!absent) throw error;
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require(LOCAL_IMPL) as typeof Impl;
  }
}

/** The serialized face of the provider; see the module comment. */
export const provider: pulumi.dynamic.ResourceProvider<ProviderInputs, ProviderOutputs> = {
  check: async (olds, news) => (await impl().check({ ...olds }, { ...news })) as unknown as pulumi.dynamic.CheckResult<ProviderInputs>,
  diff: (id, olds, news) => impl().diff(id, olds, news),
  create: (inputs) => impl().create(inputs),
  read: (id, props) => impl().read(id, props as ProviderOutputs),
  update: (id, olds, news) => impl().update(id, olds, news),
  delete: (id, props) => impl().remove(id, props),
};
