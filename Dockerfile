# The operator's image: `keystone-appcred operator` on Node 24, as the Operator construct (constructs/operator.ts) runs
# it: entry point OPERATOR_COMMAND from /app, the non-root UID/GID 1000 (the construct's default runAsUser, the `node`
# user of the official image), and nothing written outside /tmp, so it runs with a read-only root file system (the
# construct mounts an emptyDir at /tmp). test/unit/package/dockerfile.test.ts keeps this file in sync with the construct.
#
#   docker build -t registry.example/keystone-appcred:0.1.0 .

ARG NODE_IMAGE=node:24-bookworm-slim

# Build: every dependency (TypeScript and the `node` devDependency `npm run` puts first on PATH), then `npm run build`:
# `tsc` into lib/, and the Pulumi provider plugin's bundle (tools/plugin.ts), which the image does not use.
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY src/ src/
COPY constructs/ constructs/
COPY tools/ tools/
RUN npm run build

# Runtime: the locked production dependencies only (no devDependencies, no optional peers), and the compiled code.
# Everything is owned by root and read-only to the process.
FROM ${NODE_IMAGE}
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
  && rm -rf /root/.npm /tmp/*
COPY --from=build /app/lib/src/ lib/src/
COPY --from=build /app/lib/constructs/ lib/constructs/
USER 1000:1000
# The construct's default metrics and health ports.
EXPOSE 8080 8081
ENTRYPOINT ["node", "lib/src/cli/main.js", "operator"]
