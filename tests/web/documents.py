"""Small documents several web test modules upload or run."""

from __future__ import annotations

# One node, one pod: a run that ends in a handful of events.
TINY = """\
apiVersion: kubeviz.dev/v1
kind: Scenario
metadata: {name: tiny}
spec:
  seed: 11
  nodes: [{name: node-a, allocatable: {cpu: "2", memory: 4Gi, pods: 110}}]
  objects:
    - {apiVersion: v1, kind: Pod, metadata: {name: web},
       spec: {containers: [{name: web, image: nginx, resources: {requests: {cpu: 500m}}}]}}
"""
