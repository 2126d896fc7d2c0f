"""DefaultBinder (plugins/defaultbinder/default_binder.go).

Upstream it POSTs a pods/binding; here the binding completes after the policy's bind latency on
the virtual clock, when the scheduler's binding cycle (``Scheduler.complete_binding``) has the
API server store it, so the plugin only approves it.
"""

from __future__ import annotations

from ...api.model import Pod
from ..framework import SUCCESS, BindPlugin, CycleState, Status


class DefaultBinder(BindPlugin):
    name = "DefaultBinder"

    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        return SUCCESS
