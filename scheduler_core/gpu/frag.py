"""GPU fragmentation of a node for a workload: the measure FGD descends (the paper's §3–4).

For one typical pod ``t`` the fragment ``F_t`` of a node is the free GPU milli that ``t``
cannot use there:

* all of the node's free GPU milli when ``t`` cannot run on the node at all (its model is not
  allowed, too little CPU, fewer than ``t.count`` GPUs with at least ``t.milli`` free) or
  when ``t`` asks for no GPU;
* otherwise the free milli of the GPUs with less than ``t.milli`` free (slivers too small
  for ``t``).

The node's fragmentation is ``sum_t weight_t * F_t``. This is the artifact's
``NodeGpuShareFragAmountScore`` / ``GetNodePodFrag`` (hkust-adsl/kubernetes-scheduler-simulator,
pkg/utils/frag.go): every category except "Q3 satisfied" counts as fragment. Like the
artifact, memory plays no part (neither host memory nor GPU memory).

:func:`node_fragmentation` is the definition; :func:`fragmentation_rows` and
:func:`fragmentation_after_share` compute the same numbers for many nodes with numpy, summing
in the same order so the floats are equal, not merely close.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from .typical import TypicalPod

__all__ = ["node_fragmentation", "fragmentation_rows", "fragmentation_after_share", "model_allowed_rows"]

I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]
Bools = npt.NDArray[np.bool_]


def _fragment(free: Sequence[int], total: int, cpu_free: int, model: str, t: TypicalPod) -> int:
    if t.count == 0:
        return total
    if t.models and model not in t.models:
        return total
    if cpu_free < t.cpu_milli:
        return total
    if sum(1 for f in free if f >= t.milli) < t.count:
        return total
    return sum(f for f in free if f < t.milli)


def node_fragmentation(free: Sequence[int], cpu_free: int, model: str, typical: Sequence[TypicalPod]) -> float:
    """Milli-GPU of the node expected to be fragmented for the workload ``typical``."""
    total = sum(free)
    frag = 0.0
    for t in typical:
        frag += t.weight * _fragment(free, total, cpu_free, model, t)
    return frag


_ALLOWED_CACHE: dict[tuple[tuple[str, ...], tuple[TypicalPod, ...]], list[Bools | None]] = {}
_ALLOWED_CACHE_SIZE = 16


def model_allowed_rows(models: Sequence[str], typical: Sequence[TypicalPod]) -> list[Bools | None]:
    """Per typical pod, which nodes have an allowed model (None: every node, no restriction).

    Memoised on the model list: a run asks again and again about the same nodes.
    """
    key = (tuple(models), tuple(typical))
    hit = _ALLOWED_CACHE.get(key)
    if hit is None:
        if len(_ALLOWED_CACHE) >= _ALLOWED_CACHE_SIZE:
            _ALLOWED_CACHE.clear()
        hit = _ALLOWED_CACHE[key] = _model_allowed_rows(models, typical)
    return hit


def _model_allowed_rows(models: Sequence[str], typical: Sequence[TypicalPod]) -> list[Bools | None]:
    codes: dict[str, int] = {}
    node_codes = np.fromiter((codes.setdefault(m, len(codes)) for m in models), np.int64, len(models))
    names = list(codes)
    out: list[Bools | None] = []
    for t in typical:
        if not t.models or t.count == 0:
            out.append(None)
            continue
        table = np.array([name in t.models for name in names], dtype=np.bool_)
        out.append(table[node_codes] if len(names) else np.zeros(0, dtype=np.bool_))
    return out


def fragmentation_rows(free: I64, cpu_free: I64, models: Sequence[str], typical: Sequence[TypicalPod]) -> F64:
    """:func:`node_fragmentation` of every row: ``free`` (k, 8) milli per GPU (0 past a node's
    GPUs), ``cpu_free`` (k,), ``models`` the nodes' GPU models."""
    total = free.sum(axis=1)
    acc = np.zeros(free.shape[0], dtype=np.float64)
    by_milli: dict[int, tuple[I64, I64]] = {}
    for t, allowed in zip(typical, model_allowed_rows(models, typical), strict=True):
        if t.count == 0:
            acc += t.weight * total
            continue
        counts = by_milli.get(t.milli)
        if counts is None:
            fits = free >= t.milli
            counts = by_milli[t.milli] = (fits.sum(axis=1), np.where(fits, 0, free).sum(axis=1))
        fitting, slivers = counts
        ok = (cpu_free >= t.cpu_milli) & (fitting >= t.count)
        if allowed is not None:
            ok &= allowed
        acc += t.weight * np.where(ok, slivers, total)
    return acc


def fragmentation_after_share(
    free: I64, cpu_after: I64, models: Sequence[str], typical: Sequence[TypicalPod], milli: int
) -> F64:
    """(k, 8): the fragmentation of node ``i`` after ``milli`` is taken from its GPU ``g``.

    ``cpu_after`` is the nodes' free CPU with the pod already counted. Entries where GPU ``g``
    does not exist or has less than ``milli`` free are meaningless; the caller masks them.
    Per-node counts are corrected for the one GPU that changes (shared by every typical pod
    asking for the same milli), so 1,213 nodes x 8 GPUs cost a few array passes per typical pod.
    """
    new = free - milli
    total_after = np.repeat((free.sum(axis=1) - milli)[:, None], free.shape[1], axis=1).astype(np.float64)
    acc = np.zeros(free.shape, dtype=np.float64)
    amount = np.empty(free.shape, dtype=np.float64)
    ok = np.empty(free.shape, dtype=np.bool_)
    by_milli: dict[int, tuple[I64, F64]] = {}
    for t, allowed in zip(typical, model_allowed_rows(models, typical), strict=True):
        if t.count == 0:
            acc += t.weight * total_after
            continue
        counts = by_milli.get(t.milli)
        if counts is None:
            fits_before = free >= t.milli
            fits_after = new >= t.milli
            fitting = fits_before.sum(axis=1)[:, None] - fits_before + fits_after
            sliver_before = np.where(fits_before, 0, free)
            slivers = sliver_before.sum(axis=1)[:, None] - sliver_before + np.where(fits_after, 0, new)
            counts = by_milli[t.milli] = (fitting, slivers.astype(np.float64))
        fitting, slivers_f = counts
        row_ok = cpu_after >= t.cpu_milli
        if allowed is not None:
            row_ok &= allowed
        # amount = where(ok, slivers, total); acc += weight * amount — in place, no allocations.
        np.greater_equal(fitting, t.count, out=ok)
        ok &= row_ok[:, None]
        np.copyto(amount, total_after)
        np.copyto(amount, slivers_f, where=ok)
        amount *= t.weight
        acc += amount
    return acc
