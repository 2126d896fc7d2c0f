"""What a pod asks of GPUs and what a node has, in Kubernetes terms.

* A node's GPUs are the ``nvidia.com/gpu`` extended resource in ``status.allocatable`` (as the
  NVIDIA device plugin advertises them); their model is the node label ``kubeviz.dev/gpu-model``.
* A pod's request is in annotations, because a share of one GPU cannot be an extended resource
  (extended resources are whole numbers and never shared): ``kubeviz.dev/gpu-count`` GPUs, each
  ``kubeviz.dev/gpu-milli`` thousandths of a GPU (1000 = the whole GPU; below 1000 only with
  count 1, a GPU-sharing pod), restricted to the models in ``kubeviz.dev/gpu-model``
  (``V100M16|V100M32``; absent = any model).
* The GPUs a pod got are recorded by the scheduler at Reserve (``Pod.gpu_index``) and in the
  trace's ``bound`` event (``gpus``), as a GPU-sharing scheduler writes the device index into an
  annotation before binding.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

__all__ = [
    "GPU_RESOURCE",
    "GPU_MODEL_LABEL",
    "GPU_COUNT_ANNOTATION",
    "GPU_MILLI_ANNOTATION",
    "GPU_MODEL_ANNOTATION",
    "MILLI",
    "MAX_GPUS_PER_NODE",
    "GpuRequest",
    "gpu_request_of",
]

GPU_RESOURCE = "nvidia.com/gpu"
GPU_MODEL_LABEL = "kubeviz.dev/gpu-model"
GPU_COUNT_ANNOTATION = "kubeviz.dev/gpu-count"
GPU_MILLI_ANNOTATION = "kubeviz.dev/gpu-milli"
GPU_MODEL_ANNOTATION = "kubeviz.dev/gpu-model"
MILLI = 1000  # one whole GPU, in thousandths
MAX_GPUS_PER_NODE = 8  # the trace's largest node; the arrays in view.py are this wide


@dataclass(frozen=True, slots=True)
class GpuRequest:
    """``count`` GPUs of ``milli`` thousandths each, on a node whose model is in ``models`` (empty: any)."""

    count: int
    milli: int
    models: tuple[str, ...] = ()

    @property
    def shared(self) -> bool:
        """A share of one GPU: other pods may use the rest of it."""
        return self.count == 1 and self.milli < MILLI

    @property
    def total_milli(self) -> int:
        return self.count * self.milli

    def allows(self, model: str) -> bool:
        return not self.models or model in self.models

    def as_dict(self) -> dict[str, object]:
        """The trace's ``pod_added.gpu``."""
        return {"count": self.count, "milli": self.milli, "models": list(self.models)}


def _whole_number(value: str, key: str) -> int:
    """ASCII digits only (``"²".isdigit()`` is True and ``int()`` refuses it), and never so many
    that ``int()`` raises or costs: the annotations' ranges are small."""
    text = value.strip()
    shown = repr(text if len(text) <= 20 else text[:19] + "…")
    if not (text.isascii() and text.isdigit()):
        raise ValueError(f"{key}: must be a whole number, not {shown}")
    digits = text.lstrip("0") or "0"
    if len(digits) > 9:
        raise ValueError(f"{key}: must be a whole number of at most 9 digits, not {shown}")
    return int(digits)


def gpu_request_of(annotations: Mapping[str, str]) -> GpuRequest | None:
    """The pod's GPU request from its annotations; None when it asks for no GPU.

    Raises ValueError naming the annotation when a value is malformed or out of range.
    """
    count_text = annotations.get(GPU_COUNT_ANNOTATION)
    milli_text = annotations.get(GPU_MILLI_ANNOTATION)
    models_text = annotations.get(GPU_MODEL_ANNOTATION, "")
    if count_text is None:
        if milli_text is not None or models_text:
            given = GPU_MILLI_ANNOTATION if milli_text is not None else GPU_MODEL_ANNOTATION
            raise ValueError(f"{given}: needs {GPU_COUNT_ANNOTATION} too")
        return None
    count = _whole_number(count_text, GPU_COUNT_ANNOTATION)
    if count > MAX_GPUS_PER_NODE:
        raise ValueError(f"{GPU_COUNT_ANNOTATION}: at most {MAX_GPUS_PER_NODE}, not {count}")
    milli = MILLI if milli_text is None else _whole_number(milli_text, GPU_MILLI_ANNOTATION)
    if count == 0:
        if milli_text is not None and milli != 0:
            raise ValueError(f"{GPU_MILLI_ANNOTATION}: must be 0 (or left out) when {GPU_COUNT_ANNOTATION} is 0")
        return None
    if not 1 <= milli <= MILLI:
        raise ValueError(f"{GPU_MILLI_ANNOTATION}: between 1 and {MILLI}, not {milli}")
    if milli < MILLI and count != 1:
        raise ValueError(f"{GPU_MILLI_ANNOTATION}: a share below {MILLI} needs {GPU_COUNT_ANNOTATION} 1, not {count}")
    models = tuple(m.strip() for m in models_text.split("|") if m.strip())
    return GpuRequest(count, milli, models)
