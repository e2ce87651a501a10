# vnpu daemon image: a virtual Ascend NPU served on port 9470.
#
#   docker build -t vnpu .
#   docker run --rm -p 9470:9470 --shm-size=1g -e VNPU_TOKEN=change-me vnpu
#
# Host buffers (aclrtMallocHost) live in POSIX shared memory (/dev/shm); Docker's default of 64 MiB is small, so
# give the container room with --shm-size (compose: shm_size). Settings are VNPU_* variables (see `vnpu serve
# --help`); without a token the daemon accepts anyone who can reach the port, so set VNPU_TOKEN when it is exposed.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    VNPU_HOST=0.0.0.0 \
    VNPU_PORT=9470

# /run/vnpu: where `vnpu serve --uds` puts its socket (docker-compose.yml's "uds" profile mounts a volume there)
RUN useradd --create-home --uid 10001 vnpu && install -d -o vnpu -g vnpu -m 0750 /run/vnpu
WORKDIR /app
COPY pyproject.toml README.md ./
COPY proto ./proto
COPY server ./server
COPY client ./client
COPY examples ./examples
# runtime dependencies only (no test extras)
RUN pip install --no-cache-dir . && rm -rf /root/.cache

USER vnpu
EXPOSE 9470
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:' + os.environ.get('VNPU_PORT', '9470') + '/healthz', timeout=2)"]
ENTRYPOINT ["vnpu", "serve"]
