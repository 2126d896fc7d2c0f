"""Hostile documents: what every entry point that reads a document must refuse, cheaply.

One corpus for the tests (each document refused with its line and field, nothing saved: tests/core
/test_hostile_documents.py for the loaders and the CLI, tests/web/test_hostile_documents.py for the
forms and the API) and for the bench (bench/bench_hostile.py prints what each costs the serving
process). ``expected`` is a regular expression the refusal must match: the source, the line and the
field path where the document has them.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Hostile", "YAML_CORPUS", "SCENARIO_CORPUS", "CLUSTER_CORPUS", "POLICY_CORPUS", "CSV_CORPUS", "deep_json"]


@dataclass(frozen=True)
class Hostile:
    name: str
    text: str
    expected: str  # a regular expression the refusal matches, with {source} for the file name


def deep_json(levels: int, key: str = "spec") -> str:
    """``{"spec": [[[…]]]}``: one line, ``levels`` deep, ~2 bytes a level (what took minutes to refuse)."""
    return f'{{"{key}": {"[" * levels}{"]" * levels}}}'


def _laughs() -> str:
    """The billion laughs: nine levels of ten aliases."""
    text = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    for name, prev in zip("bcdefghi", "abcdefgh", strict=True):
        text += f"{name}: &{name} [{','.join(['*' + prev] * 9)}]\n"
    return text


def _long_keys() -> str:
    """~300 KB: four levels of 20 long keys, each aliasing the level below (gigabytes of field paths)."""
    text = ""
    for level, name in enumerate("abcd"):
        value = "x" if level == 0 else "*" + "abcd"[level - 1]
        anchor = f" &{name}" if level < 3 else ""
        text += f"{name}:{anchor}\n" + "".join(f"  ? {name}{i:03d}{'k' * 3700}\n  : {value}\n" for i in range(20))
    return text


_DEPTH = r"nested more than 64 levels deep"
_ROOT64 = r"(\[0\]){60,65}"

# Refused by the YAML reader itself, whatever the document is for.
YAML_CORPUS = [
    Hostile("deep JSON, 8 KB", deep_json(4_000), r"{source}:1 spec" + _ROOT64 + ": " + _DEPTH),
    Hostile("deep JSON, 100 KB", deep_json(50_000), r"{source}:1 spec" + _ROOT64 + ": " + _DEPTH),
    Hostile("deep JSON, 2 MB", deep_json(1_000_000), r"{source}:1 spec" + _ROOT64 + ": " + _DEPTH),
    Hostile("deep JSON with a syntax error", '{"a": ' + "[" * 900 + ",", r"{source}:1 a" + _ROOT64 + ": " + _DEPTH),
    Hostile("deep block sequence", "- " * 20_000 + "x\n", r"{source}:1 " + _ROOT64 + ": " + _DEPTH),
    Hostile(
        "deep block mapping", "".join(" " * i + f"k{i}:\n" for i in range(80)), r"{source}:66 k0\.k1\..*: " + _DEPTH
    ),
    Hostile("billion laughs", _laughs(), r"{source}:\d+ \w+(\[\d+\])?: alias \*\w expands to [\d,]+ values"),
    Hostile(
        "long keys repeated by aliases",
        _long_keys(),
        r"{source}:97 c\.c006k+…k+: alias \*b repeats 420 fields whose paths add up to",
    ),
    Hostile(
        "a recursive alias",
        "a: &a [*a]\n",
        r"{source}:1 a\[0\]: invalid YAML: alias \*a refers to an anchor that contains it",
    ),
    Hostile(
        "a Python tag",
        "a: !!python/object/apply:os.system ['true']\n",
        r"{source}:1 a: unsupported YAML tag tag:yaml.org,2002:python/object/apply:os.system",
    ),
    Hostile("a merge key", "a: &a {x: 1}\nb: {<<: *a}\n", r"{source}:2 b: YAML merge keys \(<<\) are not supported"),
    Hostile(
        "a NUL byte",
        "a: b\nc: \x00\n",
        r"{source}:2: invalid YAML: unacceptable character #x0000: control characters are not allowed",
    ),
    Hostile("an unterminated string", 'a: "b\n' + "c: d\n" * 10, r"{source}:\d+: invalid YAML: .*quoted scalar"),
    Hostile("too many documents", "a: 1\n---\n" * 10_001, r"{source}:20000: more than 10,000 documents"),
    Hostile(
        "too many values",
        "a: [" + "1," * 200_001 + "1]\n",
        r"{source}:1 a\[199998\]: document too large: more than 200,000 values",
    ),
    Hostile("text over the size limit", "a: b\n" * 600_000, r"(text|file) is 2\.9 MiB; the limit is 2\.0 MiB"),
]

_HEAD = "apiVersion: kubeviz.dev/v1\nkind: Scenario\nmetadata: {name: h}\nspec:\n"
_NODE = '  nodes: [{name: n, allocatable: {cpu: "4", memory: 8Gi}}]\n'

SCENARIO_CORPUS = [
    *YAML_CORPUS,
    Hostile(
        "an absurd quantity",
        _HEAD + '  nodes: [{name: n, allocatable: {cpu: "1e400", memory: 8Gi}}]\n',
        r"{source}:5 spec\.nodes\[0\]\.allocatable\.cpu: ",
    ),
    Hostile(
        "a timeline at 10^30 s",
        _HEAD + _NODE + "  timeline: [{at: 1000000000000000000000000000000s, action: cordon, target: node/n}]\n",
        r"{source}:6 spec\.timeline\[0\]\.at: ",
    ),
    Hostile(
        "a Python tag inside a pod",
        _HEAD + _NODE + "  objects:\n    - !!python/object:os.system {}\n",
        r"{source}:7 spec\.objects\[0\]: unsupported YAML tag",
    ),
    Hostile(
        "ten billion replicas",
        _HEAD + _NODE + "  objects:\n    - {apiVersion: apps/v1, kind: Deployment, metadata: {name: d}, spec: {"
        "replicas: 10000000000, selector: {matchLabels: {a: b}},"
        " template: {metadata: {labels: {a: b}}, spec: {containers: [{name: c, image: i}]}}}}\n",
        r"{source}:7 spec\.objects\[0\]\.spec\.replicas: ",
    ),
]

CLUSTER_CORPUS = [
    *YAML_CORPUS,
    Hostile(
        "a node with an absurd quantity",
        'apiVersion: v1\nkind: Node\nmetadata: {name: n}\nstatus: {allocatable: {cpu: "1e400", memory: 8Gi}}\n',
        r"{source}:4 status\.allocatable\.cpu: ",
    ),
    Hostile(
        "a node with a bad name",
        "apiVersion: v1\nkind: Node\nmetadata: {name: Bad_Name}\n",
        r"{source}:3 metadata\.name: \"Bad_Name\" is not a valid name",
    ),
]

_POLICY = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"

POLICY_CORPUS = [
    *YAML_CORPUS,
    Hostile(
        "an unknown plugin",
        _POLICY + "profiles:\n  - plugins:\n      score:\n        enabled: [{name: NoSuchPlugin}]\n",
        r"{source}:6 profiles\[0\]\.plugins\.score\.enabled\[0\]\.name: ",
    ),
    Hostile(
        "an absurd backoff",
        _POLICY + "podInitialBackoffSeconds: 100000000000000000000000000\n",
        r"{source}:3 podInitialBackoffSeconds: must be at most 315360000",
    ),
]

_NODES_HEAD = "sn,cpu_milli,memory_mib,gpu,model\n"
_PODS_HEAD = (
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"
)
_POD_ROW = "p-0,1000,1024,1,1000,,LS,Running,0,10,0\n"

# (name, nodes CSV, pods CSV, expected): the GPU trace's two files.
CSV_CORPUS = [
    (
        "a NUL byte in the node list",
        _NODES_HEAD + "n-0,96000,\x00,8,V100M16\n",
        _PODS_HEAD + _POD_ROW,
        r"{nodes}:2: column 3 \(memory_mib\)",
    ),
    (
        "an absurd CPU",
        _NODES_HEAD + "n-0,1" + "0" * 400 + ",786432,8,V100M16\n",
        _PODS_HEAD + _POD_ROW,
        r"{nodes}:2: column 2 \(cpu_milli\): must be a whole number",
    ),
    (
        "a pod asking for 10^9 GPUs",
        _NODES_HEAD + "n-0,96000,786432,8,V100M16\n",
        _PODS_HEAD + "p-0,1000,1024,1000000000,1000,,LS,Running,0,10,0\n",
        r"{pods}:2: column 4 \(num_gpu\): must be a whole number 0\.\.8",
    ),
    (
        "a row of a million fields",
        _NODES_HEAD + "n-0" + ",1" * 1_000_000 + "\n",
        _PODS_HEAD + _POD_ROW,
        r"{nodes}:2: 1000001 fields, but the header has 5",
    ),
    (
        "binary data",
        _NODES_HEAD + "\udcff\udcfe\x01\x02\n",
        _PODS_HEAD + _POD_ROW,
        r"{nodes}:2(: 1 fields, but the header has 5|: byte 0xff at column 1 is not UTF-8 text)",
    ),
]
