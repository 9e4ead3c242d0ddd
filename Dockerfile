# syntax=docker/dockerfile:1
# pull-secret: the adapter (`pull-secret adapter`) and the job its Kubernetes Jobs run
# (`pull-secret run-job pull-secret`), on Red Hat UBI 9 with Node.js 22 LTS.
# Build: docker build -t quay.io/openshift-hyperfleet/pull-secret:0.1.0 .
# The base images are pinned by digest (the tag beside it says which release the digest is); how to
# refresh them: docs/deployment.md, "Building the image".

# Stage 1: compile and bundle with every dependency (dev ones included), then assemble the runtime
# file layout (scripts/assemble-image-layout.mjs): the executable, the bundles of every command
# (scripts/bundle.mjs) and the package.json that says they are ES modules. Nothing of node_modules
# is needed at run time: the bundles hold the code they load.
FROM registry.access.redhat.com/ubi9/nodejs-22:9.8-1790572348@sha256:ef4f18a7e736696b1314bdc21bcf57bfd50ba3ea4f80c13833f777316b25c035 AS build
WORKDIR /opt/app-root/src
COPY --chown=1001:0 package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY --chown=1001:0 tsconfig.json tsconfig.build.json ./
COPY --chown=1001:0 src ./src
COPY --chown=1001:0 scripts/bundle.mjs scripts/assemble-image-layout.mjs ./scripts/
RUN npm run build \
 && node scripts/assemble-image-layout.mjs --dist dist --out /opt/app-root/layout

# Stage 2: the runtime. Minimal base, no npm run at start; the layout's files are owned by root,
# directories 0755 and files 0644 (the executable 0755): read-only to the app. The layout holds
# /opt/pull-secret and the upstream chart's /usr/local/bin/pull-secret (a link to the executable).
FROM registry.access.redhat.com/ubi9/nodejs-22-minimal:9.8-1790648388@sha256:ca1c79182159009eb15a041bc6bb16f390a4e738b9d57d6cc4975f3b2981788b
LABEL org.opencontainers.image.title="pull-secret" \
      org.opencontainers.image.description="HyperFleet pull secret adapter and job" \
      org.opencontainers.image.licenses="Apache-2.0"
COPY --from=build /opt/app-root/layout/ /
WORKDIR /opt/pull-secret
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
