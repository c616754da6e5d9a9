/**
 * The import graph's rule (GUIDE, Style; issue 47): no import circle, type-only imports included (a circle of types is
 * still two concepts that cannot be read apart). test/unit/repository/code-shape.test.ts runs it over src/, constructs/,
 * tools/, bench/, test/ and examples/; by hand: `npx depcruise src constructs tools bench test examples`.
 *
 * No `tsConfig`: its `paths` make the resolver read the `constructs` package as the ./constructs/ folder; the package's
 * own names (`keystone-appcred/...`), which the paths map, are imported only by the examples and the e2e fixtures, which
 * nothing imports back, so no circle can run through them.
 */
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'A module imports, directly or through others, a module that imports it: move what both need into a module both build on.',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|lib|dist|coverage|\\.tmp)/' },
  },
};
