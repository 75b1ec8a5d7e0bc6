# The image of a Dirigent worker: Node 20, Python 3 for Python tools, the built CLI.
FROM node:20-bookworm-slim
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 ca-certificates \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY . .
RUN npm ci --no-audit --no-fund
ENTRYPOINT []
CMD ["node", "/app/dist/cli/main.js", "worker"]
