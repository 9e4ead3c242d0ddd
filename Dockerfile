# syntax=docker/dockerfile:1
# pull-secret: the adapter (`pull-secret adapter`) and the job its Kubernetes Jobs run
# (`pull-secret run-job pull-secret`), on Red Hat UBI 9 with Node.js 22 LTS.
# Build: docker build -t quay.io/openshift-hyperfleet/pull-secret:0.1.0 .
# Pin the base images by digest in release builds (docs/deployment.md, "Building the image").

# Stage 1: compile TypeScript with every dependency (dev ones included). The dev stack (dist/dev,
# `pull-secret dev`) is compiled for the type check and then dropped: it needs the development
# dependencies and the API contract, which the image leaves out. `npm run build` also bundles the
# job and the adapter (dist/bundle, scripts/bundle.mjs), which the executable runs for `run-job` and
# `adapter`.
FROM registry.access.redhat.com/ubi9/nodejs-22:1 AS build
WORKDIR /opt/app-root/src
COPY --chown=1001:0 package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY --chown=1001:0 tsconfig.json tsconfig.build.json ./
COPY --chown=1001:0 src ./src
COPY --chown=1001:0 scripts/bundle.mjs ./scripts/
RUN npm run build \
 && rm -rf dist/dev \
 && chmod 0755 dist/cli/pull-secret.js \
 && mkdir -p bin usr-local-bin \
 && ln -s ../dist/cli/pull-secret.js bin/pull-secret \
 && ln -s /opt/pull-secret/dist/cli/pull-secret.js usr-local-bin/pull-secret

# Stage 2: production dependencies only, from the lock file, no install scripts.
FROM registry.access.redhat.com/ubi9/nodejs-22:1 AS deps
WORKDIR /opt/app-root/src
COPY --chown=1001:0 package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
 && npm cache clean --force

# Stage 3: the runtime. Minimal base, no npm run at start, files owned by root and read-only to the app.
FROM registry.access.redhat.com/ubi9/nodejs-22-minimal:1
LABEL org.opencontainers.image.title="pull-secret" \
      org.opencontainers.image.description="HyperFleet pull secret adapter and job" \
      org.opencontainers.image.licenses="Apache-2.0"
WORKDIR /opt/pull-secret
COPY --from=deps /opt/app-root/src/node_modules ./node_modules
COPY --from=build /opt/app-root/src/dist ./dist
COPY --from=build /opt/app-root/src/bin ./bin
# The upstream chart's Job runs /usr/local/bin/pull-secret: the same executable answers there
# (a directory copy keeps the link a link).
COPY --from=build /opt/app-root/src/usr-local-bin/ /usr/local/bin/
COPY package.json package-lock.json ./
# NODE_OPTIONS: the job's small young generation (JOB_DEFAULTS.nodeOptions in src/kube/job-manifest.ts),
# so the job run straight from the image stays under 80 MB; a container env NODE_OPTIONS replaces it.
ENV NODE_ENV=production \
    PATH=/opt/pull-secret/bin:$PATH \
    LOCAL_STORE_DIR=/tmp/pull-secret/store \
    NODE_OPTIONS=--max-semi-space-size=1
# Non-root UID 1000; Kubernetes adds readOnlyRootFilesystem and an emptyDir on /tmp.
USER 1000:1000
EXPOSE 8080 9090
# No HEALTHCHECK: Kubernetes probes /healthz and /readyz on port 8080 (deploy/base/deployment.yaml).
ENTRYPOINT ["pull-secret"]
CMD ["adapter", "--config", "/etc/pull-secret/adapter.yaml"]
