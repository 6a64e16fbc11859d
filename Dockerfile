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
RUN pip install --disable-pip-version-check . && useradd --create-home plb
USER plb
ENTRYPOINT ["plb"]
CMD ["--help"]
