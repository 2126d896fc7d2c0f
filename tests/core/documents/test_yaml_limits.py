"""What a hostile document can cost: caps counted while reading, aliases by what they expand to, a CPU budget."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler_core.documents import scenario as scenario_module
from scheduler_core.documents import yamlsource
from scheduler_core.documents.errors import LoadError
from scheduler_core.documents.scenario import MAX_NODES, load_scenario
from scheduler_core.documents.yamlsource import MAX_TEXT_BYTES, MAX_VALUES, cpu_budget, describe_sizes, load_documents
from scheduler_core.scheduler.policy import load_policy

HEAD = "apiVersion: kubeviz.dev/v1\nkind: Scenario\nmetadata: {name: s}\nspec:\n"
NODE = '{name: n%05d, allocatable: {cpu: "4", memory: 8Gi}}'
POD = "{apiVersion: v1, kind: Pod, metadata: {name: p%d}, spec: {containers: [{name: c}]}}"


def first_error(text: str, **kwargs: Any) -> str:
    with pytest.raises(LoadError) as info:
        load_scenario(text, **kwargs)
    return str(info.value.problems[0])


def nodes_document(count: int) -> str:
    return HEAD + "  nodes:\n" + "".join(f"    - {NODE % i}\n" for i in range(count))


# Sizes in messages


@pytest.mark.parametrize(
    ("size", "limit", "expected"),
    [
        (2_411_725, 2_097_152, ("2.3 MiB", "2.0 MiB")),
        (2_100_000, 2_097_152, ("2.003 MiB", "2.000 MiB")),
        (2_097_153, 2_097_152, ("2,097,153 bytes", "2,097,152 bytes")),
        (2_097_152, 2_097_152, ("2.0 MiB", "2.0 MiB")),
        (300_000, 262_144, ("293.0 KiB", "256.0 KiB")),
        (1_200, 1_000, ("1,200 bytes", "1,000 bytes")),
    ],
    ids=[
        "a size well over the limit reads in MiB with one decimal",
        "a size just over the limit gets the decimals that tell the two apart",
        "one byte over the limit reads in bytes",
        "a size equal to the limit reads the same",
        "KiB limits read in KiB",
        "limits under a KiB read in bytes",
    ],
)
def test_describe_sizes_never_reads_the_same_for_different_sizes(
    size: int, limit: int, expected: tuple[str, str]
) -> None:
    assert describe_sizes(size, limit) == expected


def test_text_over_the_limit_names_both_sizes() -> None:
    expected = "scenario.yaml: text is 2,097,155 bytes; the limit is 2,097,152 bytes"
    assert first_error("a: " + "x" * MAX_TEXT_BYTES) == expected


# Node and pod caps, counted while reading


def test_too_many_nodes_stop_at_the_cap_before_any_node_is_built(monkeypatch: pytest.MonkeyPatch) -> None:
    """The 10,001st node entry ends the read: its line, the count and the cap; no node object was built."""
    built: list[Any] = []
    real = scenario_module.parse_node_shorthand
    monkeypatch.setattr(scenario_module, "parse_node_shorthand", lambda *a: built.append(a) or real(*a))
    message = first_error(nodes_document(MAX_NODES + 500))
    assert message == (
        f"scenario.yaml:{MAX_NODES + 6} spec.nodes[{MAX_NODES}]: too many nodes: this is node 10,001; a scenario "
        "holds at most 10,000 (counted while reading, before any object was built)"
    )
    assert built == []


@pytest.mark.slow  # documents at the size caps
def test_a_scenario_at_the_node_cap_loads() -> None:
    assert len(load_scenario(nodes_document(MAX_NODES)).nodes) == MAX_NODES


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "".join(f"---\nkind: Node\nmetadata: {{name: n{i}}}\n" for i in range(4)),
            "scenario.yaml:11: too many nodes: this is node 4; a scenario holds at most 3",
        ),
        (
            "kind: List\nitems:\n" + "".join(f"  - {{kind: Node, metadata: {{name: n{i}}}}}\n" for i in range(4)),
            "scenario.yaml:6 items[3]: too many nodes: this is node 4; a scenario holds at most 3",
        ),
        (
            HEAD
            + "  nodes: [{name: a}, {name: b}]\n  timeline:\n"
            + "    - {at: 1s, action: addNode, node: {name: c}}\n    - {at: 2s, action: addNode, node: {name: d}}\n",
            "scenario.yaml:8 spec.timeline[1].node: too many nodes: this is node 4; a scenario holds at most 3",
        ),
        (
            HEAD + "  nodes: [&n {name: a}, *n, *n, *n]\n",
            "scenario.yaml:5 spec.nodes[3]: too many nodes: this is node 4; a scenario holds at most 3",
        ),
        (
            HEAD + "  objects:\n" + "".join(f"    - {POD % i}\n" for i in range(6)),
            "scenario.yaml:11 spec.objects[5]: too many pods: this is pod 6; a scenario holds at most 5",
        ),
        (
            HEAD + "  nodes: [{name: a}]\n  objects: [&p " + POD % 0 + "]\n  timeline:\n"
            "    - {at: 1s, action: create, objects: [" + ", ".join(POD % i for i in range(1, 6)) + "]}\n",
            "scenario.yaml:8 spec.timeline[0].objects[4]: too many pods: this is pod 6; a scenario holds at most 5",
        ),
    ],
    ids=[
        "Node manifests are counted document by document",
        "the items of a List are counted",
        "nodes added by the timeline count",
        "an alias of a node entry counts as a node",
        "pods in spec.objects are counted",
        "pods created by the timeline count",
    ],
)
def test_caps_are_counted_wherever_objects_are_written(
    monkeypatch: pytest.MonkeyPatch, text: str, expected: str
) -> None:
    monkeypatch.setattr(scenario_module, "MAX_NODES", 3)
    monkeypatch.setattr(scenario_module, "MAX_PODS", 5)
    assert first_error(text).startswith(expected)


# Aliases: counted by what they expand to, before they are expanded


def test_an_alias_past_the_value_budget_is_refused_at_its_line() -> None:
    """Five levels of ten aliases are 111,111 values each; the one that would pass 200,000 is named."""
    text = "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
    for name, prev in zip("bcde", "abcd", strict=True):
        text += f"{name}: &{name} [{', '.join(['*' + prev] * 10)}]\n"
    text += "f: [*e, *e]\n"
    with pytest.raises(LoadError) as info:
        load_documents(text, "bomb.yaml")
    assert str(info.value) == (
        "bomb.yaml:6 f[0]: alias *e expands to 111,111 values, which takes the document past 200,000 "
        "(an alias counts as everything it points to)"
    )


def test_long_keys_repeated_by_aliases_are_refused_before_their_paths_are_built() -> None:
    """~300 KB: four levels of 20 long keys, each aliasing the level below — 160,000 values (under
    the value cap) whose field paths would add up to gigabytes."""
    text = ""
    for level, name in enumerate("abcd"):
        value = "x" if level == 0 else "*" + "abcd"[level - 1]
        anchor = f" &{name}" if level < 3 else ""
        text += f"{name}:{anchor}\n" + "".join(f"  ? {name}{i:03d}{'k' * 3700}\n  : {value}\n" for i in range(20))
    assert 250_000 < len(text) < 310_000
    with pytest.raises(LoadError) as info:
        load_documents(text, "keys.yaml")
    problem = info.value.problems[0]
    assert problem.line == 97  # the first alias of *b under c
    assert problem.message.startswith("alias *b repeats 420 fields whose paths add up to ")
    assert problem.message.endswith("past 32 MiB of field paths (long keys repeated by aliases)")
    assert len(problem.path) < 600  # a megabyte path is cut for the message


def test_values_stay_under_the_cap_when_aliases_are_cheap() -> None:
    text = "a: &a [" + ", ".join(["x"] * 1000) + "]\nb: [" + ", ".join(["*a"] * 150) + "]\n"
    (document,) = load_documents(text)
    assert len(document.data["b"]) == 150
    assert document.data["b"][0] is not document.data["b"][1]  # each alias is its own copy
    assert document.line_of("b[3][999]") == 1  # fields inside an alias point at the anchor's lines


@pytest.mark.slow  # documents at the size caps
def test_plain_values_past_the_cap_are_refused_at_their_line() -> None:
    text = "a: [" + ",".join(["1"] * (MAX_VALUES + 5)) + "]\n"
    with pytest.raises(LoadError) as info:
        load_documents(text, "wide.yaml")
    assert str(info.value) == f"wide.yaml:1 a[{MAX_VALUES - 2}]: document too large: more than 200,000 values"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "deep: &d " + "[" * 40 + "x" + "]" * 40 + "\nuse:" + "".join(f"\n{'  ' * i}- " for i in range(30)) + "*d\n",
            "nested more than 64 levels deep once alias *d is expanded",
        ),
        ("a: &a [1, *a]\n", "invalid YAML: alias *a refers to an anchor that contains it (a recursive structure)"),
        ("a: *nowhere\n", "invalid YAML: alias *nowhere refers to no anchor"),
        ("a: &x 1\nb: &x 2\n", "invalid YAML: found duplicate anchor &x"),
        ("? [a, b]\n: c\n", "mapping keys must be plain strings"),
        ("<<: {a: 1}\n", "YAML merge keys (<<) are not supported"),
    ],
    ids=[
        "an alias that would nest too deep is refused at the alias",
        "a recursive alias is refused",
        "an alias to no anchor is refused",
        "an anchor defined twice is refused",
        "a mapping key must be a plain string",
        "merge keys are refused",
    ],
)
def test_alias_and_key_problems(text: str, expected: str) -> None:
    with pytest.raises(LoadError) as info:
        load_documents(text)
    assert info.value.problems[0].message == expected


def test_too_many_documents_name_the_line_of_the_first_one_past_the_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(yamlsource, "MAX_DOCUMENTS", 3)
    with pytest.raises(LoadError) as info:
        load_documents("a: 1\n---\na: 2\n---\na: 3\n---\na: 4\n", "many.yaml")
    assert str(info.value) == "many.yaml:6: more than 3 documents"


def test_syntax_errors_in_long_documents_keep_their_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past PYTHON_WORDING_BYTES libyaml's own words are used (re-reading would cost seconds), same line."""
    text = "".join(f"a{i}: 1\n" for i in range(100)) + "b: [\n"
    short = first_error(text)
    monkeypatch.setattr(yamlsource, "PYTHON_WORDING_BYTES", 10)
    long = first_error(text)
    assert short.startswith("scenario.yaml:102: invalid YAML: ")
    assert long.startswith("scenario.yaml:102: invalid YAML: ")
    assert short != long


def test_nesting_too_deep_for_libyaml_is_refused_at_the_field_where_it_passes_the_limit() -> None:
    """libyaml refuses past 1,000 levels before the reader sees an event; the refusal still names
    the field at level 65 (and costs a linear libyaml read, not a pure-Python one)."""
    text = '{"spec": {"nodes": ' + "[" * 5_000 + "]" * 5_000 + "}}"
    with pytest.raises(LoadError) as info:
        load_documents(text, "deep.json")
    problem = info.value.problems[0]
    assert (problem.line, problem.message) == (1, "nested more than 64 levels deep")
    assert problem.path == "spec.nodes" + "[0]" * 63


def test_the_python_wording_is_given_up_when_it_costs_more_than_its_share(monkeypatch: pytest.MonkeyPatch) -> None:
    """The pure-Python re-read (whose cost grows with the square of flow nesting) stops at
    WORDING_CPU_SECONDS and libyaml's words stand, on the same line."""
    text = "a: " + "[" * 60 + "\n" + "b: ]]\n"
    worded = first_error(text)
    monkeypatch.setattr(yamlsource, "WORDING_CPU_SECONDS", -1.0)
    plain = first_error(text)
    assert worded != plain
    assert worded.split(": invalid YAML")[0] == plain.split(": invalid YAML")[0]


def test_a_nul_byte_is_refused_on_its_line() -> None:
    with pytest.raises(LoadError) as info:
        load_documents("a: b\nc: d\ne: \x00\n", "nul.yaml")
    assert (
        str(info.value) == "nul.yaml:3: invalid YAML: unacceptable character #x0000: control characters are not allowed"
    )


# The CPU budget


def test_reading_stops_when_the_cpu_budget_is_spent() -> None:
    with cpu_budget(1e-9), pytest.raises(LoadError) as info:
        load_scenario(nodes_document(500))
    assert info.value.problems[0].message == (
        "gave up after 1e-09 s of CPU time: the document is too expensive to read (fewer objects or aliases will load)"
    )


def test_a_policy_is_read_under_the_same_budget() -> None:
    policy = (
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nleaderElection:\n  x: ["
        + ", ".join(["1"] * 5000)
        + "]\n"
    )
    load_policy(policy)  # loads without a budget
    with cpu_budget(1e-9), pytest.raises(LoadError, match="gave up after"):
        load_policy(policy)


def test_an_inner_budget_never_extends_an_outer_one() -> None:
    with cpu_budget(1e-9), cpu_budget(60), pytest.raises(LoadError, match="gave up after 1e-09 s"):
        load_scenario(nodes_document(500))


def test_the_python_wording_stays_inside_the_callers_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """A spent budget leaves libyaml's words rather than paying for the re-read."""
    text = "a: [\n" * 3 + "b: ]]\n"
    worded = first_error(text)
    with monkeypatch.context() as patch:
        patch.setattr(yamlsource, "WORDING_CPU_SECONDS", -1.0)
        plain = first_error(text)
    assert worded != plain
    with cpu_budget(60):
        # Past the caller's deadline (a few events do not reach the reader's own check).
        monkeypatch.setattr(yamlsource.time, "thread_time", lambda: 1e12)
        assert first_error(text) == plain


def test_without_a_budget_nothing_is_timed() -> None:
    with cpu_budget(None):
        assert len(load_scenario(nodes_document(500)).nodes) == 500
