"""PrioritySort: the default QueueSort (plugins/queuesort/priority_sort.go)."""

from __future__ import annotations

from ..framework import QueuedPodInfo, QueueSortPlugin


class PrioritySort(QueueSortPlugin):
    name = "PrioritySort"

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        """Higher priority first; equal priority → earlier queue timestamp first."""
        pa, pb = a.pod.priority, b.pod.priority
        if pa != pb:
            return pa > pb
        if a.timestamp_ms != b.timestamp_ms:
            return a.timestamp_ms < b.timestamp_ms
        return a.seq < b.seq  # simulator tie-break: insertion order (upstream: heap order)
