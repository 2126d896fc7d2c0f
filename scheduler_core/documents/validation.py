"""The API server's rules for names, label keys and values, and annotation keys.

Ported from k8s.io/apimachinery/pkg/util/validation/validation.go (IsQualifiedName,
IsValidLabelValue, IsDNS1123Label, IsDNS1123Subdomain, IsDNS1035Label) and
k8s.io/apimachinery/pkg/api/validation/objectmeta.go (ValidateAnnotations). Each check returns
upstream's messages (empty when the value is valid); the loaders add the field path and line.
Upstream's messages also quote the regular expression; ours leave it out (docs/scenario.md).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

__all__ = [
    "DNS1123_LABEL_MAX",
    "DNS1123_SUBDOMAIN_MAX",
    "LABEL_VALUE_MAX",
    "QUALIFIED_NAME_MAX",
    "TOTAL_ANNOTATION_SIZE",
    "annotation_size_error",
    "dns1035_label_errors",
    "dns1123_label_errors",
    "dns1123_subdomain_errors",
    "label_value_errors",
    "qualified_name_errors",
]

QUALIFIED_NAME_MAX = 63
LABEL_VALUE_MAX = 63
DNS1123_LABEL_MAX = 63
DNS1123_SUBDOMAIN_MAX = 253
DNS1035_LABEL_MAX = 63
TOTAL_ANNOTATION_SIZE = 256 * 1024  # objectmeta.go TotalAnnotationSizeLimitB

_QUALIFIED_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_DNS1035_LABEL = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")

_QUALIFIED_NAME_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
    "character (e.g. 'MyName', 'my.name', '123-abc')"
)
_LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'MyValue', 'my_value', '12345')"
)
_DNS1123_LABEL_MSG = (
    "a DNS-1123 label must consist of lower case alphanumeric characters or '-', and must start and end with "
    "an alphanumeric character (e.g. 'my-name', '123-abc')"
)
_DNS1123_SUBDOMAIN_MSG = (
    "a DNS-1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and "
    "end with an alphanumeric character (e.g. 'example.com')"
)
_DNS1035_LABEL_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic "
    "character, and end with an alphanumeric character (e.g. 'my-name', 'abc-123')"
)


def _bytes(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def _max_len(limit: int) -> str:
    return f"must be no more than {limit} characters"


def dns1123_label_errors(value: str) -> list[str]:
    """IsDNS1123Label: namespace names, StatefulSet names."""
    errors = [_max_len(DNS1123_LABEL_MAX)] if len(value) > DNS1123_LABEL_MAX else []
    if not _DNS1123_LABEL.fullmatch(value):
        errors.append(_DNS1123_LABEL_MSG)
    return errors


def dns1123_subdomain_errors(value: str) -> list[str]:
    """IsDNS1123Subdomain: most object names (pods, nodes, Deployments, …) and label key prefixes."""
    errors = [_max_len(DNS1123_SUBDOMAIN_MAX)] if len(value) > DNS1123_SUBDOMAIN_MAX else []
    if not _DNS1123_SUBDOMAIN.fullmatch(value):
        errors.append(_DNS1123_SUBDOMAIN_MSG)
    return errors


def dns1035_label_errors(value: str) -> list[str]:
    """IsDNS1035Label: Service names (pkg/apis/core/validation ValidateServiceName)."""
    errors = [_max_len(DNS1035_LABEL_MAX)] if len(value) > DNS1035_LABEL_MAX else []
    if not _DNS1035_LABEL.fullmatch(value):
        errors.append(_DNS1035_LABEL_MSG)
    return errors


def qualified_name_errors(value: str) -> list[str]:
    """IsQualifiedName: label keys, annotation keys, topology and taint keys.

    An optional DNS-1123 subdomain prefix and "/", then a name of at most 63 characters of
    [A-Za-z0-9._-] that starts and ends with an alphanumeric character.
    """
    parts = value.split("/")
    errors: list[str] = []
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errors.append("prefix part must be non-empty")
        else:
            errors.extend(f"prefix part {message}" for message in dns1123_subdomain_errors(prefix))
    else:
        return [
            f"a qualified name {_QUALIFIED_NAME_MSG} with an optional DNS subdomain prefix and '/' "
            "(e.g. 'example.com/MyName')"
        ]
    if not name:
        errors.append("name part must be non-empty")
    elif len(name) > QUALIFIED_NAME_MAX:
        errors.append(f"name part {_max_len(QUALIFIED_NAME_MAX)}")
    if not _QUALIFIED_NAME.fullmatch(name):
        errors.append(f"name part {_QUALIFIED_NAME_MSG}")
    return errors


def label_value_errors(value: str) -> list[str]:
    """IsValidLabelValue: at most 63 characters, empty or a qualified name's charset and shape."""
    errors = [_max_len(LABEL_VALUE_MAX)] if len(value) > LABEL_VALUE_MAX else []
    if value and not _QUALIFIED_NAME.fullmatch(value):
        errors.append(_LABEL_VALUE_MSG)
    return errors


def annotation_size_error(annotations: Mapping[str, str]) -> str | None:
    """ValidateAnnotationsSize: keys and values together may not exceed 256 KiB."""
    total = sum(_bytes(key) + _bytes(value) for key, value in annotations.items())
    if total > TOTAL_ANNOTATION_SIZE:
        return f"may not be more than {TOTAL_ANNOTATION_SIZE} bytes in total (keys and values), got {total}"
    return None
