"""Hostile values: small documents whose one bad value every door that reads it must refuse.

tests/hostile.py holds documents that are expensive to read; these are cheap, and each hides one
value the engine once took (or raised on): a quantity past an int64 (the run then failed with
"cannot fit 'int' into an index-sized integer" and a traceback anybody could read), a resource
named ``../x``, an integer of 5,000 digits in a GPU trace's CSV (``int()`` raised past 4,300
digits: a 500 and a CLI traceback), a lone surrogate (libyaml's UnicodeEncodeError: a 500), a
``Gt`` value or a GPU annotation ``int()`` could not read. Each is refused with the document's
source, the line and the field (``expected``, a regular expression with ``{source}``), and
nothing is stored. tests/core/documents/test_hostile_values.py sends them through the engine's
loaders and the CLI, tests/web/test_hostile_values.py through the pages and the API.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "BIG",
    "CLUSTER_VALUES",
    "CSV_VALUES",
    "INT64_MAX",
    "SCENARIO_VALUES",
    "SURROGATE_SCENARIO",
    "Value",
    "csv_scenario",
    "scenario",
]

BIG = "1000000000000000000000000000000"  # 10^30
INT64_MAX = str(2**63 - 1)
TWO_63 = str(2**63)
DIGITS_5000 = "9" * 5000  # int() refuses more than 4,300 digits (ValueError), after reading them
TOO_LARGE = r"is too large: a quantity is at most 9223372036854775807"
BAD_NAME = r'"\.\./x" is not a valid resource name: '


@dataclass(frozen=True)
class Value:
    name: str
    text: str
    expected: str  # a regular expression the refusal matches, with {source} for the file name


def scenario(nodes: str = "", objects: str = "", timeline: str = "", extra: str = "") -> str:
    """A Scenario document: one good node unless ``nodes`` says otherwise, line 6 the first node."""
    nodes = nodes or '    - {name: node-a, allocatable: {cpu: "4", memory: 16Gi}}\n'
    text = f"apiVersion: kubeviz.dev/v1\nkind: Scenario\nmetadata: {{name: hostile}}\nspec:\n  nodes:\n{nodes}"
    text += f"  objects:\n{objects}" if objects else "  objects: []\n"
    text += f"  timeline:\n{timeline}" if timeline else ""
    return text + extra


def _pod(requests: str, *, annotations: str = "", affinity: str = "") -> str:
    meta = f"metadata: {{name: p{', annotations: {' + annotations + '}' if annotations else ''}}}"
    spec = f"spec: {{{affinity}containers: [{{name: c, image: i, resources: {{requests: {{{requests}}}}}}}]}}"
    return f"    - apiVersion: v1\n      kind: Pod\n      {meta}\n      {spec}\n"


def _node(allocatable: str) -> str:
    return f"    - {{name: node-a, allocatable: {{cpu: '4', memory: 16Gi, {allocatable}}}}}\n"


_GT = "affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
_GT += "[{matchExpressions: [{key: rank, operator: Gt, values: ['" + BIG + "']}]}]}}}, "


def csv_scenario(nodes_csv: str, pods_csv: str) -> str:
    """A Scenario whose ``spec.gpuTrace`` holds the two CSVs (line 8 is the nodes' header)."""
    indent = "      "
    nodes_block = "".join(f"{indent}{line}\n" for line in nodes_csv.splitlines())
    pods_block = "".join(f"{indent}{line}\n" for line in pods_csv.splitlines())
    return (
        "apiVersion: kubeviz.dev/v1\nkind: Scenario\nmetadata: {name: hostile-trace}\nspec:\n"
        f"  gpuTrace:\n    targetGpuPercent: 100\n    nodesCsv: |\n{nodes_block}    podsCsv: |\n{pods_block}"
    )


NODES_HEADER = "sn,cpu_milli,memory_mib,gpu,model"
PODS_HEADER = "name,cpu_milli,memory_mib,num_gpu,gpu_milli"
GOOD_NODES = f"{NODES_HEADER}\ngpu-a,32000,131072,2,T4\n"
GOOD_PODS = f"{PODS_HEADER}\nshare,4000,8192,1,500\n"

# (name, nodes CSV, pods CSV, expected with {nodes} and {pods} for the file names; CSV line 2)
CSV_VALUES = [
    (
        "5,000 digits of cpu_milli in the node list",
        f"{NODES_HEADER}\ngpu-a,{DIGITS_5000},131072,2,T4\n",
        GOOD_PODS,
        r"{nodes}:2: column 2 \(cpu_milli\): must be a whole number of millicores 0\.\.1000000000, not '9{{39}}…'",
    ),
    (
        "5,000 digits of memory_mib in the pod list",
        GOOD_NODES,
        f"{PODS_HEADER}\nshare,4000,{DIGITS_5000},1,500\n",
        r"{pods}:2: column 3 \(memory_mib\): must be a whole number of MiB 0\.\.1099511627776, not '9{{39}}…'",
    ),
    (
        "5,000 digits of a pod's creation_time",
        GOOD_NODES,
        f"{PODS_HEADER},creation_time\nshare,4000,8192,1,500,{DIGITS_5000}\n",
        r"{pods}:2: column 6 \(creation_time\): must be a whole number 0\.\.10000000000, not '9{{39}}…'",
    ),
    (
        "memory_mib of 2^60 (a whole number, past the largest)",
        f"{NODES_HEADER}\ngpu-a,32000,{2**60},2,T4\n",
        GOOD_PODS,
        rf"{{nodes}}:2: column 3 \(memory_mib\): must be a whole number of MiB 0\.\.1099511627776, not '{2**60}'",
    ),
]

SCENARIO_VALUES = [
    Value(
        "10^30 of an extended resource on a node",
        scenario(_node(f"example.com/foo: '{BIG}'")),
        r'{source}:6 spec\.nodes\[0\]\.allocatable\["example\.com/foo"\]: "' + BIG + '" ' + TOO_LARGE,
    ),
    Value(
        "2^63 of an extended resource on a node",
        scenario(_node(f"example.com/foo: '{TWO_63}'")),
        r'{source}:6 spec\.nodes\[0\]\.allocatable\["example\.com/foo"\]: "' + TWO_63 + '" ' + TOO_LARGE,
    ),
    Value(
        "10^30 as a YAML integer",
        scenario(_node(f"example.com/foo: {BIG}")),
        r'{source}:6 spec\.nodes\[0\]\.allocatable\["example\.com/foo"\]: "' + BIG + '" ' + TOO_LARGE,
    ),
    Value(
        "2^63-1 cores of cpu (past 2^63-1 millicores)",
        scenario(f"    - {{name: node-a, allocatable: {{cpu: '{INT64_MAX}', memory: 16Gi}}}}\n"),
        r'{source}:6 spec\.nodes\[0\]\.allocatable\.cpu: "' + INT64_MAX + '" ' + TOO_LARGE + " millicores",
    ),
    Value(
        "10^30 in a setAllocatable action",
        scenario(
            timeline=f"    - {{at: 5s, action: setAllocatable, target: node/node-a, allocatable: {{cpu: '{BIG}'}}}}\n"
        ),
        r"{source}:9 spec\.timeline\[0\]\.allocatable\.cpu: \"" + BIG + '" ' + TOO_LARGE,
    ),
    Value(
        "10^30 on a node addNode adds",
        scenario(
            timeline="    - at: 5s\n      action: addNode\n"
            f"      node: {{name: node-b, allocatable: {{example.com/foo: '{BIG}'}}}}\n"
        ),
        r'{source}:11 spec\.timeline\[0\]\.node\.allocatable\["example\.com/foo"\]: "' + BIG + '" ' + TOO_LARGE,
    ),
    Value(
        "10^30 in a container's requests",
        scenario(objects=_pod(f"example.com/foo: '{BIG}'")),
        r'{source}:11 spec\.objects\[0\]\.spec\.containers\[0\]\.resources\.requests\["example\.com/foo"\]: "'
        + BIG
        + '" '
        + TOO_LARGE,
    ),
    Value(
        "a resource named ../x on a node",
        scenario(_node("../x: '1'")),
        r'{source}:6 spec\.nodes\[0\]\.allocatable\["\.\./x"\]: ' + BAD_NAME,
    ),
    Value(
        "a resource named ../x in a container's requests",
        scenario(objects=_pod("../x: '1'")),
        r'{source}:11 spec\.objects\[0\]\.spec\.containers\[0\]\.resources\.requests\["\.\./x"\]: ' + BAD_NAME,
    ),
    Value(
        "a resource named ../x in a setAllocatable action",
        scenario(timeline="    - {at: 5s, action: setAllocatable, target: node/node-a, allocatable: {../x: '1'}}\n"),
        r'{source}:9 spec\.timeline\[0\]\.allocatable\["\.\./x"\]: ' + BAD_NAME,
    ),
    Value(
        "a Gt value past an int64",
        scenario(objects=_pod("cpu: '1'", affinity=_GT)),
        r"{source}:11 spec\.objects\[0\]\.spec\.affinity\.nodeAffinity\..*\.values: "
        r"must be a single integer \(64-bit\)",
    ),
    Value(
        "a GPU count of a superscript two",
        scenario(objects=_pod("cpu: '1'", annotations="kubeviz.dev/gpu-count: '²'")),
        r'{source}:10 spec\.objects\[0\]\.metadata\.annotations\["kubeviz\.dev/gpu-count"\]: '
        r"must be a whole number, not '²'",
    ),
    Value(
        "a GPU share of 5,000 digits",
        scenario(
            objects=_pod("cpu: '1'", annotations=f"kubeviz.dev/gpu-count: '1', kubeviz.dev/gpu-milli: '{DIGITS_5000}'")
        ),
        r'{source}:10 spec\.objects\[0\]\.metadata\.annotations\["kubeviz\.dev/gpu-milli"\]: '
        r"must be a whole number of at most 9 digits",
    ),
    *(
        Value(
            f"spec.gpuTrace: {name}",
            csv_scenario(nodes, pods),
            # the CSV's line 2 is the document's line 9 (nodes) or 12 (pods)
            pattern.replace("{nodes}:2: ", r"{source}:9 spec\.gpuTrace\.nodesCsv: CSV line 2, ")
            .replace("{pods}:2: ", r"{source}:12 spec\.gpuTrace\.podsCsv: CSV line 2, ")
            .replace("{{39}}", "{39}"),
        )
        for name, nodes, pods, pattern in CSV_VALUES
    ),
]

# A lone surrogate, as JSON's "\ud800" decodes: only the API (and Python callers) can send one,
# since forms and files are decoded from UTF-8 bytes, which cannot hold one.
SURROGATE_SCENARIO = Value(
    "a lone surrogate",
    scenario(_node("example.com/foo: '1'")).replace("name: hostile", "name: hostile\ud800"),
    r"{source}:3: character 25 is U\+D800, a lone surrogate \(half of a UTF-16 pair, not a character\)",
)

_KUBECTL_NODE = """apiVersion: v1
kind: List
items:
  - apiVersion: v1
    kind: Node
    metadata: {{name: node-a}}
    status:
      allocatable: {{cpu: "4", memory: 16Gi, {resource}}}
"""

CLUSTER_VALUES = [
    Value(
        "10^30 of an extended resource on a kubectl Node",
        _KUBECTL_NODE.format(resource=f"example.com/foo: '{BIG}'"),
        r'{source}:8 items\[0\]\.status\.allocatable\["example\.com/foo"\]: "' + BIG + '" ' + TOO_LARGE,
    ),
    Value(
        "2^63 of memory on a kubectl Node",
        _KUBECTL_NODE.format(resource=f"hugepages-2Mi: '{TWO_63}'"),
        r'{source}:8 items\[0\]\.status\.allocatable\.hugepages-2Mi: "' + TWO_63 + '" ' + TOO_LARGE,
    ),
    Value(
        "a resource named ../x on a kubectl Node",
        _KUBECTL_NODE.format(resource="../x: '1'"),
        r'{source}:8 items\[0\]\.status\.allocatable\["\.\./x"\]: ' + BAD_NAME,
    ),
    *(v for v in SCENARIO_VALUES if "on a node" in v.name or "gpuTrace" in v.name),
]
