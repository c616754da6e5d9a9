# The operator's image: `keystone-appcred operator` on Node 24, as the Operator construct (constructs/operator/) runs
# it: entry point OPERATOR_COMMAND from /app, the non-root UID/GID 1000 (the construct's default runAsUser, the `node`
# user of the official image), and nothing written outside /tmp, so it runs with a read-only root file system (the
# construct mounts an emptyDir at /tmp). test/unit/package/dockerfile.test.ts keeps this file in sync with the construct;
# test/e2e/image-operator.test.ts builds it and runs it as the construct's Deployment. See docs/install/image.md.
#
#   docker build -t registry.example/keystone-appcred:0.2.0 .
#   npm run image -- --tag registry.example/keystone-appcred:0.2.0           (buildah; --base local without a registry)
#
# Behind a TLS-intercepting proxy, `npm ci` trusts the extra CAs of the build secret `extra-ca` (a PEM file), with
# docker, podman and buildah alike: `--secret id=extra-ca,src=/path/to/proxy-ca.pem`. Without it nothing is mounted.

ARG NODE_IMAGE=node:24-bookworm-slim

# Build: every dependency (TypeScript, the `node` devDependency npx puts first on PATH), then the compiler into lib/.
# Not `npm run build`: it also bundles the Pulumi provider plugin (tools/plugin.ts, which reads the tests' support code),
# which the operator does not run.
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN --mount=type=secret,id=extra-ca \
  if [ -s /run/secrets/extra-ca ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/extra-ca; fi \
  && npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY src/ src/
COPY constructs/ constructs/
RUN npx tsc -p tsconfig.json

# Runtime: the locked production dependencies only (no devDependencies, no optional peers), and the compiled code.
# Everything is owned by root and read-only to the process.
FROM ${NODE_IMAGE}
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
RUN --mount=type=secret,id=extra-ca \
  if [ -s /run/secrets/extra-ca ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/extra-ca; fi \
  && npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
  && rm -rf /root/.npm /tmp/*
COPY --from=build /app/lib/src/ lib/src/
COPY --from=build /app/lib/constructs/ lib/constructs/
USER 1000:1000
# The construct's default metrics and health ports.
EXPOSE 8080 8081
ENTRYPOINT ["node", "lib/src/cli/main.js", "operator"]
