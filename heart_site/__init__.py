from __future__ import annotations

import os

# The maths works on small matrices (systems x systems): BLAS threads only contend with the other
# web and worker processes on the same cores, and made a 200-system fit 7x slower under load.
# Set before numpy is first imported; an explicit environment value still wins.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

from .celery import app as celery_app  # noqa: E402

__all__ = ("celery_app",)
