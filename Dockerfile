# personal-leaderboard: the plb command line in a slim image.
#   docker build -t plb .
#   docker run --rm -v "$PWD:/data" plb leaderboard /data/battles.csv.gz
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
WORKDIR /app
COPY pyproject.toml README.md ./
COPY ranking ranking
COPY features features
COPY service service
COPY data data
# PyTorch first, then the package. Plain PyPI torch is a CUDA build of several GB: for
# the CPU build pass --build-arg TORCH="torch==2.13.0 --index-url <PyTorch's CPU index>".
ARG TORCH="torch==2.13.0"
RUN pip install --disable-pip-version-check $TORCH \
    && pip install --disable-pip-version-check . \
    && useradd --create-home plb
USER plb
ENV HF_HUB_OFFLINE=1 PLB_CACHE_DIR=/home/plb/.cache/personal-leaderboard
ENTRYPOINT ["plb"]
CMD ["--help"]
