# One image for web (gunicorn), the Celery workers, beat and Flower.
FROM python:3.12-slim-bookworm
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
WORKDIR /app
RUN apt-get update && apt-get install -y --no-install-recommends curl && rm -rf /var/lib/apt/lists/*
COPY pyproject.toml ./
# The project installs as its pinned dependencies only (no packages of its own to build).
RUN pip install --upgrade pip && pip install .
COPY . .
# A throw-away key for this build step only (DEBUG off refuses to start without one).
RUN SECRET_KEY=collectstatic-build-step-only python manage.py collectstatic --noinput
RUN useradd --create-home heart && chown -R heart /app
USER heart
EXPOSE 8000
CMD ["gunicorn", "-c", "gunicorn.conf.py", "heart_site.wsgi:application"]
