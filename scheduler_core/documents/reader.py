"""The typed reader every document loader reads its fields through.

:class:`Reader` turns one parsed YAML document into typed values field by field: each read names
the field's path, each refusal is a :class:`~scheduler_core.documents.errors.Problem` with the
document's line for that path, and the reads look at the CPU budget as they go (a document can
never burn a CPU). The Kubernetes objects (``k8s_parse.py``), the policy documents and the GPU
trace's options all read through it; it knows no kind of object.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .durations import parse_duration_ms
from .errors import Problem, Problems
from .validation import (
    annotation_size_error,
    label_value_errors,
    qualified_name_errors,
)
from .yamlsource import Document, check_cpu, describe, index_path, key_path

__all__ = ["INT32_MAX", "INT32_MIN", "Naming", "Reader", "field_of", "quoted"]

_SHOWN_KEY = 80  # characters of a key or value a message quotes
_CPU_CHECK_EVERY = 64  # mappings read between two looks at the CPU budget
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1


class Naming:
    """Deterministic names and uids for one load: ``generateName`` counters and unique uids."""

    def __init__(self) -> None:
        self.generated: dict[str, int] = {}
        self.uids: dict[str, int] = {}

    def generate(self, prefix: str) -> str:
        """``taint-node-`` → ``taint-node-0``, then ``taint-node-1`` … (upstream adds 5 random characters)."""
        n = self.generated.get(prefix, 0)
        self.generated[prefix] = n + 1
        return f"{prefix}{n}"

    def uid(self, key: str) -> str:
        """``default/web-0``; a second object with the same key (recreated later) gets ``default/web-0~1``."""
        n = self.uids.get(key, 0)
        self.uids[key] = n + 1
        return key if n == 0 else f"{key}~{n}"


class Reader:
    """Where values come from (source, document lines) and where problems go."""

    def __init__(
        self,
        source: str = "",
        document: Document | None = None,
        problems: Problems | None = None,
        naming: Naming | None = None,
        warnings: list[Problem] | None = None,
    ) -> None:
        self.source = source
        self.document = document
        self.problems = problems if problems is not None else Problems()
        self.naming = naming if naming is not None else Naming()
        # What loads but is probably a mistake (a field Kubernetes does not know); never fatal.
        self.warnings = warnings if warnings is not None else []
        self._countdown = _CPU_CHECK_EVERY

    def line(self, path: str) -> int | None:
        return self.document.line_of(path) if self.document is not None else None

    def error(self, path: str, message: str, *, at: str | None = None) -> None:
        """A problem at ``path``, on the line of ``at`` (a field inside it) when given."""
        self.problems.add(Problem(self.source, self.line(path if at is None else at), path, message))

    def warn(self, path: str, message: str) -> None:
        """A warning on the line of ``path``; the message names the field itself."""
        self.warnings.append(Problem(self.source, self.line(path), "", message))

    # typed accessors: report a problem and return the default on a wrong type

    def mapping(self, value: Any, path: str, *, required: bool = False) -> dict[str, Any]:
        self._countdown -= 1
        if not self._countdown:  # every object is read as mappings: a good place to watch the budget
            self._countdown = _CPU_CHECK_EVERY
            check_cpu(self.source, self.line(path), path)
        if value is None:
            if required:
                self.error(path, "is required")
            return {}
        if not isinstance(value, dict):
            self.error(path, f"expected a mapping, got {describe(value)}")
            return {}
        return value

    def items(self, value: Any, path: str) -> list[tuple[str, Any]]:
        """A list's (item path, item) pairs; null is an empty list."""
        if value is None:
            return []
        if not isinstance(value, list):
            self.error(path, f"expected a list, got {describe(value)}")
            return []
        return [(index_path(path, i), item) for i, item in enumerate(value)]

    def string(self, value: Any, path: str, default: str = "", *, required: bool = False) -> str:
        if value is None:
            if required:
                self.error(path, "is required")
            return default
        if not isinstance(value, str):
            hint = f' (quote it: "{value}")' if isinstance(value, (int, float, bool)) else ""
            self.error(path, f"expected a string, got {describe(value)}{hint}")
            return default
        if required and not value:
            self.error(path, "must not be empty")
        return str(value)

    def integer(
        self,
        value: Any,
        path: str,
        default: int = 0,
        *,
        minimum: int | None = None,
        maximum: int | None = None,
        required: bool = False,
    ) -> int:
        if value is None:
            if required:
                self.error(path, "is required")
            return default
        if isinstance(value, bool) or not isinstance(value, int):
            self.error(path, f"expected an integer, got {describe(value)}")
            return default
        if minimum is not None and value < minimum:
            self.error(path, f"must be at least {minimum}, got {value}")
            return default
        if maximum is not None and value > maximum:
            self.error(path, f"must be at most {maximum}, got {value}")
            return default
        return value

    def boolean(self, value: Any, path: str, default: bool = False) -> bool:
        if value is None:
            return default
        if not isinstance(value, bool):
            self.error(path, f"expected true or false, got {describe(value)}")
            return default
        return value

    def choice(self, value: Any, path: str, allowed: Sequence[str], default: str) -> str:
        text = self.string(value, path, default)
        if value is not None and text not in allowed:
            self.error(path, f'"{text}" is not one of {", ".join(allowed)}')
            return default
        return text

    def duration_ms(self, value: Any, path: str, default: int | None = None) -> int | None:
        if value is None:
            return default
        try:
            return parse_duration_ms(value)
        except ValueError as exc:
            self.error(path, str(exc))
            return default

    def string_map(self, value: Any, path: str) -> dict[str, str]:
        out: dict[str, str] = {}
        for key, item in self.mapping(value, path).items():
            out[key] = self.string(item, key_path(path, key))
        return out

    def label_map(self, value: Any, path: str) -> dict[str, str]:
        """Labels (or a selector's matchLabels, a nodeSelector): ValidateLabels in
        apimachinery/pkg/apis/meta/v1/validation — qualified-name keys, label values."""
        labels = self.string_map(value, path)
        for key, item in labels.items():
            item_path = key_path(path, key)
            self.label_key(key, path, at=item_path)
            errors = label_value_errors(item)
            if errors:
                self.error(item_path, f"{quoted(item)} is not a valid label value: {'; '.join(errors)}")
        return labels

    def label_key(self, key: str, path: str, *, what: str = "label key", at: str | None = None) -> None:
        """ValidateLabelName: a qualified name (validation.go IsQualifiedName)."""
        errors = qualified_name_errors(key)
        if errors:
            self.error(path, f"{quoted(key)} is not a valid {what}: {'; '.join(errors)}", at=at)

    def annotation_map(self, value: Any, path: str) -> dict[str, str]:
        """ValidateAnnotations (apimachinery/pkg/api/validation/objectmeta.go): keys are qualified
        names, compared lowercased; keys and values together at most 256 KiB."""
        annotations = self.string_map(value, path)
        for key in annotations:
            errors = qualified_name_errors(key.lower())
            if errors:
                self.error(
                    path,
                    f"{quoted(key)} is not a valid annotation key: {'; '.join(errors)}",
                    at=key_path(path, key),
                )
        size_error = annotation_size_error(annotations)
        if size_error:
            self.error(path, size_error)
        return annotations

    def string_list(self, value: Any, path: str) -> tuple[str, ...]:
        return tuple(self.string(item, item_path) for item_path, item in self.items(value, path))

    def only_fields(self, obj: Mapping[str, Any], path: str, allowed: Sequence[str]) -> None:
        """Strict documents (our own formats): unknown fields are errors."""
        for key in obj:
            if key not in allowed:
                self.error(key_path(path, key), f"unknown field; expected one of {', '.join(allowed)}")


def quoted(text: str) -> str:
    """``"text"`` for a message, cut short when a hostile document makes it long."""
    shown = text if len(text) <= _SHOWN_KEY else text[: _SHOWN_KEY - 1] + "…"
    return f'"{shown}"'


def field_of(obj: Mapping[str, Any], key: str, path: str) -> tuple[Any, str]:
    return obj.get(key), key_path(path, key)
