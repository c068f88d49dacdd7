# topobridge: the controller and admission webhook (`topobridge run`).
#
# Two stages: `build` installs the project and its wheels into a virtualenv and compiles the
# bytecode once; the runtime stage copies only that virtualenv onto the same slim base and runs
# as an unprivileged numeric user. Nothing is written at run time outside /tmp (the chart mounts
# an emptyDir there), so the container runs with readOnlyRootFilesystem: true.

ARG PYTHON_IMAGE=python:3.11-slim-bookworm

FROM ${PYTHON_IMAGE} AS build
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1
WORKDIR /src
COPY pyproject.toml README.md ./
COPY topobridge ./topobridge
COPY translations ./translations
COPY webhooks ./webhooks
COPY controller ./controller
# Bytecode is compiled here: with a read-only root the interpreter could not write it later.
RUN python -m venv /opt/topobridge \
 && /opt/topobridge/bin/pip install --upgrade pip \
 && /opt/topobridge/bin/pip install . \
 && /opt/topobridge/bin/python -m compileall -q /opt/topobridge/lib \
 && /opt/topobridge/bin/topobridge --version

FROM ${PYTHON_IMAGE}
LABEL org.opencontainers.image.title="topobridge" \
      org.opencontainers.image.description="Network-topology-aware gang scheduling across LeaderWorkerSet, Koordinator and Volcano" \
      org.opencontainers.image.licenses="Apache-2.0"
COPY --from=build /opt/topobridge /opt/topobridge
ENV PATH=/opt/topobridge/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    HOME=/tmp \
    TMPDIR=/tmp
# A numeric UID/GID, so Kubernetes can enforce runAsNonRoot without a passwd entry.
USER 65532:65532
WORKDIR /tmp
EXPOSE 9443 9090
ENTRYPOINT ["topobridge"]
CMD ["run"]
