"""GPU trace import: the Alibaba GPU trace v2023's CSVs as a Scenario document.

It sits above the scenario loader: :mod:`.document` samples the trace and writes a document the
loader reads back (to check it); :mod:`.import_cli` is the ``gpu-trace`` command, and the web's
trace upload calls :func:`.document.scenario_document`. Nothing below imports it: the loader
itself reads the CSVs embedded in ``spec.gpuTrace`` with :mod:`scheduler_core.documents.gpu_trace_csv`.
"""

from __future__ import annotations

from .document import scenario_document

__all__ = [
    "scenario_document",
]
