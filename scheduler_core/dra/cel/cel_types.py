"""CEL's types as the checker sees them, and the one variable a selector has: ``device``.

Kept apart from the values (values.py) because the checker and the estimator need only these,
and the evaluator needs them only to dispatch an overload a ``dyn`` argument left open.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final


@dataclass(frozen=True, slots=True)
class CelType:
    name: str
    params: tuple[CelType, ...] = ()

    def __str__(self) -> str:
        if self.name == "null_type":
            return "null"
        if not self.params:
            return self.name
        return f"{self.name}({', '.join(str(p) for p in self.params)})"

    @property
    def is_param(self) -> bool:
        return self.name.startswith("_")


BOOL, INT, UINT, DOUBLE = CelType("bool"), CelType("int"), CelType("uint"), CelType("double")
STRING, BYTES, NULL, DYN, ANY = (
    CelType("string"),
    CelType("bytes"),
    CelType("null_type"),
    CelType("dyn"),
    CelType("any"),
)
QUANTITY, SEMVER, DEVICE = CelType("kubernetes.Quantity"), CelType("kubernetes.Semver"), CelType("kubernetes.DRADevice")
TYPE_A, TYPE_B = CelType("_A"), CelType("_B")


def list_of(t: CelType) -> CelType:
    return CelType("list", (t,))


def map_of(k: CelType, v: CelType) -> CelType:
    return CelType("map", (k, v))


DYNLIKE = frozenset({"dyn", "any"})
SCALARS = frozenset({"bool", "int", "uint", "double"})
# The fields of ``device`` (compile.go deviceTypeV134ConsumableCapacity); attribute values are
# "any" (a scalar of one of four kinds, known only at runtime).
DEVICE_FIELDS: Final = {
    "driver": STRING,
    "allowMultipleAllocations": BOOL,
    "attributes": map_of(STRING, map_of(STRING, ANY)),
    "capacity": map_of(STRING, map_of(STRING, QUANTITY)),
}
