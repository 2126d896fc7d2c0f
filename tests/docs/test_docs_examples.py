"""Every ```bash and ```python block of README.md and docs/*.md runs, and says what it prints.

The convention (also in README.md, "Docs"):

- A ```bash block runs with bash (``-e -o pipefail``) from the repository root, the venv's
  ``bin`` first on PATH. A ```python block runs with the venv's python in an empty temporary
  directory outside the repository, so it can only use the installed package
  (``pip install -e .``), as a reader's script would.
- A ```text block right after one (blank lines between are allowed) is what the block prints,
  stdout and stderr together. It is compared line by line after a normalisation: trailing spaces
  are dropped, ``(took 0.03s)`` becomes ``(took …)`` (wall-clock time), a line ``...`` stands for
  any number of lines and ``...`` inside a line for any text. Its last line may be ``[exit N]``
  when the block is meant to fail with status N; otherwise it must exit 0.
- Blocks that must not run here (a server, Docker, a browser, a cluster, the test suite itself)
  use another fence: ```sh or ```console. ```yaml, ```json and bare ``` blocks are never run.
- ```bash slow / ```python slow (the word after the language) marks a block that takes more than
  about 3 s; it is marked ``slow`` and left out of ``make test-fast``.
- ```yaml docs/examples/NAME.yaml: the block is that file, which examples run; the test checks
  that the two are equal.

docs/api.md has its own test and is left out here.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC_FILES = [ROOT / "README.md", *sorted(p for p in (ROOT / "docs").glob("*.md") if p.name != "api.md")]
RUN_LANGUAGES = ("bash", "python")
TIMEOUT_SECONDS = 60
VENV_BIN = Path(sys.executable).parent

_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,})(?P<info>[^`]*)$")
_TOOK = re.compile(r"\(took [0-9.]+s\)")
_EXIT = re.compile(r"^\[exit (\d+)\]$")


@dataclass(frozen=True)
class Block:
    """One fenced block: where it is, its language and words after it, its text (dedented)."""

    path: Path
    line: int  # of the opening fence, 1-based
    language: str
    words: tuple[str, ...]
    text: str

    @property
    def id(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


@dataclass(frozen=True)
class Example:
    block: Block
    expected: str | None  # the ```text block after it
    exit_code: int


def fenced_blocks(path: Path) -> list[Block]:
    """Every fenced block of a Markdown file, indented ones (inside list items) included."""
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        opening = _FENCE.match(lines[i])
        if opening is None:
            i += 1
            continue
        indent, fence = opening["indent"], opening["fence"]
        words = tuple(opening["info"].split())
        body: list[str] = []
        j = i + 1
        while j < len(lines) and not (lines[j].strip().startswith(fence) and lines[j].strip().strip("`") == ""):
            body.append(lines[j][len(indent) :] if lines[j].startswith(indent) else lines[j].lstrip())
            j += 1
        language = words[0] if words else ""
        blocks.append(Block(path, i + 1, language, words[1:], "\n".join(body) + "\n"))
        i = j + 1
    return blocks


def _end_line(block: Block) -> int:
    return block.line + block.text.count("\n") + 1  # the closing fence


def examples(path: Path) -> list[Example]:
    """The blocks to run, each with the ```text block that follows it, if any."""
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks = fenced_blocks(path)
    out: list[Example] = []
    for k, block in enumerate(blocks):
        following = blocks[k + 1] if k + 1 < len(blocks) else None
        if block.language not in RUN_LANGUAGES:
            continue
        expected, exit_code = None, 0
        between = lines[_end_line(block) : following.line - 1] if following else ["x"]
        if following is not None and following.language == "text" and not any(s.strip() for s in between):
            expected = following.text
            tail = expected.rstrip("\n").splitlines()
            status = _EXIT.match(tail[-1]) if tail else None
            if status:
                exit_code = int(status[1])
                expected = "\n".join(tail[:-1]) + "\n" if tail[:-1] else None
        out.append(Example(block, expected, exit_code))
    return out


ALL_EXAMPLES = [example for path in DOC_FILES for example in examples(path)]


def _normalise(text: str) -> str:
    return "\n".join(_TOOK.sub("(took …)", line).rstrip() for line in text.strip("\n").splitlines())


def _pattern(expected: str) -> re.Pattern[str]:
    """The expected text as a regex: ``...`` alone on a line is any lines, inside a line any text."""
    parts = []
    for line in _normalise(expected).splitlines():
        if line.strip() == "...":
            parts.append(r"(?:[^\n]*\n)*?")
        else:
            parts.append(".*?".join(re.escape(piece) for piece in line.split("...")) + r"\n")
    return re.compile("".join(parts))


def _run(example: Example, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env |= {"PATH": f"{VENV_BIN}{os.pathsep}{env.get('PATH', '')}", "PYTHONUNBUFFERED": "1", "NO_COLOR": "1"}
    block = example.block
    if block.language == "python":
        script = tmp_path / "example.py"
        script.write_text(block.text, encoding="utf-8")
        command, cwd = [sys.executable, str(script)], tmp_path
    else:
        command, cwd = ["bash", "-e", "-o", "pipefail", "-c", block.text], ROOT
    # Its own session, so that a timeout ends everything the block started, not only bash.
    with subprocess.Popen(
        command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True
    ) as process:
        try:
            output, _ = process.communicate(timeout=TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            pytest.fail(f"{block.id} did not finish in {TIMEOUT_SECONDS} s")
    return subprocess.CompletedProcess(command, process.returncode, output)


def _param(example: Example) -> object:
    marks = [pytest.mark.slow] if "slow" in example.block.words else []
    return pytest.param(example, id=example.block.id, marks=marks)


@pytest.mark.parametrize("example", [_param(e) for e in ALL_EXAMPLES])
def test_doc_example_runs_and_prints_what_the_doc_says(example: Example, tmp_path: Path) -> None:
    """The block exits as documented; where the doc shows its output, it prints exactly that."""
    result = _run(example, tmp_path)
    output = result.stdout
    assert result.returncode == example.exit_code, f"{example.block.id} exited {result.returncode}:\n{output}"
    if example.expected is not None:
        actual = _normalise(output) + "\n"
        assert _pattern(example.expected).fullmatch(actual), (
            f"{example.block.id} printed:\n{actual}\nthe doc says:\n{example.expected}"
        )


FILE_BLOCKS = [b for path in DOC_FILES for b in fenced_blocks(path) if b.language == "yaml" and b.words]


@pytest.mark.parametrize("block", FILE_BLOCKS, ids=[b.id for b in FILE_BLOCKS])
def test_a_yaml_block_that_names_a_file_is_that_file(block: Block) -> None:
    """The document a reader sees is the one the examples run."""
    assert (ROOT / block.words[0]).read_text(encoding="utf-8") == block.text


def test_every_bash_and_python_block_is_collected() -> None:
    """A fence the parser missed (a typo, an odd indent) would silently never run."""
    pattern = re.compile(r"^[ \t]*```(?:bash|python)\b", re.MULTILINE)
    written = sum(len(pattern.findall(path.read_text(encoding="utf-8"))) for path in DOC_FILES)
    assert written == len(ALL_EXAMPLES) > 0
    assert len({e.block.id for e in ALL_EXAMPLES}) == len(ALL_EXAMPLES)


def test_the_expected_output_convention_finds_text_blocks_and_exit_codes(tmp_path: Path) -> None:
    """The parser itself: a ```text block right after a block is its output, with an optional [exit N]."""
    doc = tmp_path / "doc.md"
    doc.write_text(
        "```bash\necho hi\n```\n\n```text\nhi\n```\n"
        "\n```bash slow\nexit 3\n```\n```text\n[exit 3]\n```\n"
        "```python\nprint(1)\n```\nprose\n```text\n1\n```\n"
        "- item\n\n  ```sh\n  make run\n  ```\n",
        encoding="utf-8",
    )
    found = examples(doc)
    assert [(e.block.language, e.block.words, e.expected, e.exit_code) for e in found] == [
        ("bash", (), "hi\n", 0),
        ("bash", ("slow",), None, 3),
        ("python", (), None, 0),
    ]
    assert [b.language for b in fenced_blocks(doc)] == ["bash", "text", "bash", "text", "python", "text", "sh"]
    assert _pattern("a\n...\nz (took 0.50s)\n").fullmatch("a\nb\nc\nz (took …)\n")
    assert _pattern("x ... y\n").fullmatch("x 1 2 y\n")
    assert not _pattern("a\nb\n").fullmatch("a\nc\n")
