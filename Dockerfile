# Toolgate as a container: `docker build -t toolgate .`, then one process per container. The
# embedded default (SQLite in /data) needs nothing else; several replicas need PostgreSQL and Redis
# (TOOLGATE_DATABASE_URL, TOOLGATE_REDIS_URL): see scripts/deploy/compose.yaml and README.md,
# "Scaling out".
FROM node:20-bookworm-slim AS build
WORKDIR /app
# better-sqlite3 builds from source when no prebuilt binary matches.
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY core core
COPY plugins plugins
COPY scripts scripts
RUN npm run build && npm prune --omit=dev

FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production \
    TOOLGATE_HOST=0.0.0.0 \
    TOOLGATE_PORT=8080 \
    TOOLGATE_DATA_DIR=/data \
    TOOLGATE_MANIFESTS_DIR=/app/manifests
COPY --from=build /app/node_modules node_modules
COPY --from=build /app/dist dist
COPY package.json ./
COPY manifests manifests
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME /data
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:8080/readyz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"
CMD ["node", "--max-semi-space-size=64", "dist/scripts/toolgate.js", "serve"]
