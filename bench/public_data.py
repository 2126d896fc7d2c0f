"""Where the public data sets are on this machine, for the benchmarks and the tests that use them.

Two data sets are not in the repository: the Alibaba GPU trace v2023 (``make gpu-trace`` fetches
it into ``data/alibaba-gpu-v2023/``, checksums in ``data/alibaba-gpu-v2023.sha256``) and the
Kubernetes documentation's example manifests (a copy of ``shared/`` beside the clone has them).
A data set is looked for in the clone's ``data/`` first, then in ``../shared/data/``.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["GPU_TRACE", "K8S_EXAMPLES", "ROOT", "candidates", "find", "missing_message"]

ROOT = Path(__file__).resolve().parents[1]
GPU_TRACE = "alibaba-gpu-v2023"
K8S_EXAMPLES = "k8s-examples"
HOW_TO_GET = {
    GPU_TRACE: "`make gpu-trace` fetches it",
    K8S_EXAMPLES: "a copy of shared/ beside the clone has them",
}


def candidates(relative: str) -> list[Path]:
    """The places ``relative`` (``"k8s-examples/deployment.yaml"``, ``"alibaba-gpu-v2023"``) may be, in order."""
    return [ROOT / "data" / relative, ROOT.parent / "shared" / "data" / relative]


def find(relative: str) -> Path | None:
    """The first of :func:`candidates` that exists, or None."""
    return next((path for path in candidates(relative) if path.exists()), None)


def missing_message(relative: str) -> str:
    """Why a use of ``relative`` cannot go on: every place looked in, and how to get the data."""
    looked = ", ".join(str(path) for path in candidates(relative))
    how = HOW_TO_GET.get(relative.split("/", 1)[0], "")
    return f"public data {relative} not found (looked in {looked})" + (f"; {how}" if how else "")
