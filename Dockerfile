# The suite and the mock in one image (docs/usage.md, "In a container"):
#   docker build -t agent-conformance .
#   docker run --rm agent-conformance run --protocol all          # the suite (the embedded mock)
#   docker run --rm -p 8000:8000 --entrypoint agent-mock agent-conformance --host 0.0.0.0
# The runtime only: no dev or interop extras. Not built by the project's tests (no Docker engine
# there); tests/test_container.py checks what can be checked without one.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1

COPY . /tmp/src
RUN pip install /tmp/src && rm -rf /tmp/src \
    && useradd --create-home --uid 10001 conformance

USER conformance
WORKDIR /home/conformance
EXPOSE 8000
ENTRYPOINT ["agent-conformance"]
CMD ["--help"]
