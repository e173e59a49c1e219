# syntax=docker/dockerfile:1
# Shotsmith: one node of the service. See README.md, "Production: several nodes".

# ---- build: dependencies (with dev ones for the web build), then the web build ----------
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build:web && npm prune --omit=dev --no-audit --no-fund

# ---- runtime: Debian with Chromium's headless shell (the default engine, docs/engine.md) and
# the fonts pages expect, tini, a non-root user ----
FROM node:24-bookworm-slim
RUN apt-get update \
  && apt-get install -y --no-install-recommends \
    chromium-headless-shell fonts-liberation fonts-noto-cjk fonts-noto-color-emoji tini ca-certificates \
  && rm -rf /var/lib/apt/lists/*

# Production mode: the local billing provider is refused (set the STRIPE_* settings, or
# LOCAL_BILLING_IN_PRODUCTION=1 on an instance strangers cannot reach), and /metrics answers
# loopback only unless METRICS_TOKEN is set. See compose.yaml for a complete configuration.
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    DATA_DIR=/data \
    CHROME_PATH=/usr/bin/chromium-headless-shell
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/src ./src
COPY --from=build /app/migrations ./migrations
COPY --from=build /app/web/dist ./web/dist
COPY --from=build /app/openapi.json ./
COPY --from=build /app/assets ./assets
# The documentation site at /docs is served from these files (src/http/docs-site.ts).
COPY --from=build /app/docs ./docs

# The image's `node` user (uid 1000) runs the service; only /data is writable (Chromium
# profiles, and SQLite and images in the embedded mode).
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8080

# tini is PID 1: it forwards SIGTERM (graceful drain) and reaps Chromium's children.
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "src/main.ts"]
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
