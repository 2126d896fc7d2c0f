"""The scenario head the DynamicResources tests share: one node, GPUs in its own ResourceSlice,
the class that selects them, a one-GPU claim template and priority classes."""

from __future__ import annotations


def dra_header(name: str, *, seed: int, gpus: int, priorities: dict[str, int]) -> str:
    """A scenario up to its last object, for tests to append objects (four-space list items)."""
    devices = "".join(f"          - {{name: gpu-{i}}}\n" for i in range(gpus))
    classes = "".join(
        f"    - {{apiVersion: scheduling.k8s.io/v1, kind: PriorityClass, metadata: {{name: {pc}}}, value: {value}}}\n"
        for pc, value in priorities.items()
    )
    return f"""
apiVersion: kubeviz.dev/v1
kind: Scenario
metadata: {{name: {name}}}
spec:
  seed: {seed}
  nodes:
    - {{name: node-1, allocatable: {{cpu: "8", memory: 16Gi, pods: 110}}}}
  objects:
    - apiVersion: resource.k8s.io/v1
      kind: DeviceClass
      metadata: {{name: gpu.example.com}}
      spec:
        selectors:
          - cel: {{expression: 'device.driver == "gpu.example.com"'}}
    - apiVersion: resource.k8s.io/v1
      kind: ResourceSlice
      metadata: {{name: node-1-gpus}}
      spec:
        driver: gpu.example.com
        nodeName: node-1
        pool: {{name: node-1, generation: 1, resourceSliceCount: 1}}
        devices:
{devices}    - apiVersion: resource.k8s.io/v1
      kind: ResourceClaimTemplate
      metadata: {{name: one-gpu}}
      spec:
        spec:
          devices:
            requests:
              - name: gpu
                exactly: {{deviceClassName: gpu.example.com}}
{classes}"""


def gpu_templates(driver: str) -> list[str]:
    """Object lines (four-space list items) of two ResourceClaimTemplates of one device of class
    ``driver``: ``a100`` (the model attribute must be A100) and ``any-gpu``."""
    lines: list[str] = []
    for name, selector in (("a100", f'device.attributes["{driver}"].model == "A100"'), ("any-gpu", "true")):
        request = f"{{deviceClassName: {driver}, selectors: [{{cel: {{expression: '{selector}'}}}}]}}"
        lines += [
            "    - apiVersion: resource.k8s.io/v1",
            "      kind: ResourceClaimTemplate",
            f"      metadata: {{name: {name}}}",
            "      spec: {spec: {devices: {requests: [{name: gpu, exactly: " + request + "}]}}}",
        ]
    return lines
