# personal-leaderboard: the service (and the plb command line) in a slim image.
#
#   docker build -t plb .
#   docker run --rm -p 8000:8000 -v plb-data:/data plb serve --demo --demo-dir /data/demo --host 0.0.0.0
#   docker run --rm -p 8000:8000 -v "$PWD/out:/data" -e PLB_INGEST_KEY=... plb    # serves /data/fit
#   docker run --rm -v "$PWD:/work" plb leaderboard /work/battles.csv.gz          # any plb command
#
# Settings come from PLB_* variables (see the README); with PLB_REDIS_URL the votes live in
# Redis and several containers can serve one fit directory (a shared volume) behind a
# load balancer.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /app

# PyTorch first, then the package, both at the versions of the lock (make lock). Plain
# PyPI torch is a CUDA build of several GB: for the CPU build pass
# --build-arg TORCH="torch==2.13.0+cpu --index-url <PyTorch's CPU index>".
ARG TORCH="torch==2.13.0"
COPY requirements/lock.txt requirements/lock.txt
RUN pip install -c requirements/lock.txt $TORCH

COPY pyproject.toml README.md ./
COPY ranking ranking
COPY features features
COPY service service
COPY data data
RUN pip install -c requirements/lock.txt ".[dask]" \
    && useradd --create-home --uid 10001 plb \
    && mkdir /data && chown plb:plb /data

USER plb
# Two malloc arenas: the thread pool's per-thread arenas otherwise grow the resident
# memory by some 15% over hours of mixed load without any leak (bench/RESULTS.md, I).
ENV HF_HUB_OFFLINE=1 \
    MALLOC_ARENA_MAX=2 \
    PLB_CACHE_DIR=/home/plb/.cache/personal-leaderboard \
    PLB_STORE_PATH=/data/store.sqlite
VOLUME ["/data"]
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=5s --start-period=120s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=4)"]
ENTRYPOINT ["plb"]
CMD ["serve", "/data/fit", "--host", "0.0.0.0", "--port", "8000"]
