# syntax=docker/dockerfile:1
# domain-space-service as an image: `docker build -t domain-space-service .` (scripts/deploy/OPERATIONS.md).
# test/deploy/production-install.test.ts does what the build stage does (its COPY and RUN lines) in a clean
# copy, and starts the result with this file's CMD and ENV as a user who can write only to the data folder.
ARG NODE_IMAGE=node:24-bookworm-slim

# The API docs page (/docs) is built with Scalar's API reference, a dev dependency: here; only the page goes on.
FROM ${NODE_IMAGE} AS docs
WORKDIR /app
COPY package.json package-lock.json ./
RUN --mount=type=cache,target=/root/.npm npm ci --ignore-scripts --no-audit --no-fund
COPY . .
RUN npm run docs

# Runtime dependencies only; npm ci's prepare step bundles server/ into .build/, so that nothing is compiled or
# written at start.
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY generated ./generated
COPY scripts ./scripts
COPY server ./server
RUN --mount=type=cache,target=/root/.npm npm ci --omit=dev --no-audit --no-fund

FROM ${NODE_IMAGE}
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATABASE_URL=sqlite:/data/domain-space.sqlite \
    FIRST_KEY_FILE=/data/first-api-key \
    DSS_BUILD_DOCS=0 \
    MALLOC_ARENA_MAX=2 \
    MALLOC_MMAP_THRESHOLD_=1048576 \
    MALLOC_TRIM_THRESHOLD_=1048576
WORKDIR /app
COPY --from=build /app ./
COPY --from=docs /app/.docs ./.docs
# The application stays root's and read-only; the service's user (the image's "node") writes only to /data:
# the SQLite database and the first start's key file (FIRST_KEY_FILE: there on PostgreSQL too, where the
# default would be a data/ folder in the read-only application).
RUN mkdir /data && chown node:node /data
VOLUME ["/data"]
USER node
EXPOSE 3000
# Liveness (/healthz never touches the database); load balancers check /readyz themselves.
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 CMD ["node", "scripts/deploy/healthcheck.mjs"]
# node itself, not npm start: SIGTERM reaches the service, which drains (DRAIN_DELAY_S, then
# SHUTDOWN_GRACE_S); give it a stop timeout above their sum (compose.yaml: stop_grace_period). The two V8
# settings are npm start's too: how much memory its heap keeps, as are the three MALLOC_ variables above, how
# much freed memory glibc keeps (scripts/deploy/OPERATIONS.md#memory).
STOPSIGNAL SIGTERM
CMD ["node", "--max-semi-space-size=4", "--heap-growing-percent=50", "scripts/start.mjs"]
