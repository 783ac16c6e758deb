# capacityweb image: one image for web (manage.py serve: Uvicorn workers), worker and beat;
# compose picks the command.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1

WORKDIR /app
RUN useradd --create-home --uid 1000 capacityweb

# psycopg's pure build (requirements/runtime.txt) loads the system libpq, as psycopg
# advises for production rather than its binary wheel.
RUN apt-get update && apt-get install -y --no-install-recommends libpq5 \
    && rm -rf /var/lib/apt/lists/*
COPY requirements/runtime.txt requirements/runtime.txt
RUN pip install --require-hashes -r requirements/runtime.txt

COPY pyproject.toml README.md ./
COPY capacityweb ./capacityweb
COPY topology ./topology
COPY reservations ./reservations
COPY recommender ./recommender
RUN pip install --no-deps .

COPY manage.py ./
COPY templates ./templates
COPY static ./static
RUN mkdir -p var && DEBUG=true python manage.py collectstatic --noinput \
    && chown -R capacityweb:capacityweb /app/var

USER capacityweb
EXPOSE 8000
# WEB_CONCURRENCY worker processes (default 2); DATABASE_POOL=true as in compose.yaml.
CMD ["python", "manage.py", "serve", "--host", "0.0.0.0", "--port", "8000"]
