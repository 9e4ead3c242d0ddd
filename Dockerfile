# syntax=docker/dockerfile:1
# pull-secret: the adapter (`pull-secret adapter`) and the job its Kubernetes Jobs run
# (`pull-secret run-job pull-secret`), on Red Hat UBI 9 with Node.js 20.
# Build: docker build -t quay.io/openshift-hyperfleet/pull-secret:0.1.0 .
# Pin the base images by digest in release builds (docs/deployment.md, "Building the image").

# Stage 1: compile TypeScript with every dependency (dev ones included).
FROM registry.access.redhat.com/ubi9/nodejs-20:1 AS build
WORKDIR /opt/app-root/src
COPY --chown=1001:0 package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY --chown=1001:0 tsconfig.json tsconfig.build.json ./
COPY --chown=1001:0 src ./src
RUN npm run build \
 && chmod 0755 dist/cli/main.js \
 && mkdir -p bin \
 && ln -s ../dist/cli/main.js bin/pull-secret

# Stage 2: production dependencies only, from the lock file, no install scripts.
FROM registry.access.redhat.com/ubi9/nodejs-20:1 AS deps
WORKDIR /opt/app-root/src
COPY --chown=1001:0 package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
 && npm cache clean --force

# Stage 3: the runtime. Minimal base, no npm run at start, files owned by root and read-only to the app.
FROM registry.access.redhat.com/ubi9/nodejs-20-minimal:1
LABEL org.opencontainers.image.title="pull-secret" \
      org.opencontainers.image.description="HyperFleet pull secret adapter and job" \
      org.opencontainers.image.licenses="Apache-2.0"
WORKDIR /opt/pull-secret
COPY --from=deps /opt/app-root/src/node_modules ./node_modules
COPY --from=build /opt/app-root/src/dist ./dist
COPY --from=build /opt/app-root/src/bin ./bin
COPY package.json package-lock.json ./
COPY contracts ./contracts
ENV NODE_ENV=production \
    PATH=/opt/pull-secret/bin:$PATH \
    LOCAL_STORE_DIR=/tmp/pull-secret/store
# Non-root UID 1000 (design §2); Kubernetes adds readOnlyRootFilesystem and an emptyDir on /tmp.
USER 1000:1000
EXPOSE 8080 9090
# No HEALTHCHECK: Kubernetes probes /healthz and /readyz on port 8080 (deploy/base/deployment.yaml).
ENTRYPOINT ["pull-secret"]
CMD ["adapter", "--config", "/etc/pull-secret/adapter.yaml"]
