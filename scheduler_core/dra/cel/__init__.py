"""CEL device selectors: compiled, type-checked, cost-estimated and evaluated as kube-scheduler does.

A DeviceClass or a claim's request selects devices with CEL expressions over one variable,
``device`` (``driver``, ``attributes``, ``capacity``, ``allowMultipleAllocations``). Upstream's
``k8s.io/dynamic-resource-allocation/cel/compile.go`` (v1.36.2) compiles them with cel-go and the
Kubernetes libraries (quantity, semver, strings, regex), refuses at validation an expression whose
*estimated* worst-case cost exceeds ``CELSelectorExpressionMaxCost``, and stops an evaluation
whose *actual* cost passes the same limit — so a hostile selector can never burn the CPU.

kubeviz parses with cel-python's grammar (``celpy.celparser``), then does the rest here, because
neither Python CEL library offers what the rules need (docs/dra.md "CEL selectors" says what
each lacked): a checker that types ``device``, an estimator that counts cel-go's cost units
(``cel-go/checker/cost.go`` plus ``k8s.io/apiserver/pkg/cel/library/cost.go``) and an evaluator
that charges the same units as it goes (``cel-go/interpreter/runtimecost.go``) and stops at
the limit with upstream's message. Compiled selectors are cached (upstream's ``cache.go``) so
the allocator does not recompile per device.

One job per module: ``parser`` (text to syntax tree, ``syntax``), ``checker`` (types, against
``declarations``), ``cost`` (the worst-case estimate), ``evaluate`` (one device, charging
``runtime_cost``), the value semantics in ``values`` and ``functions`` with the libraries
``library_strings``, ``library_quantity`` and ``library_semver``, ``device`` (a Device as the
CEL value), ``compile`` and ``cache`` (the public API re-exported here).
"""

from __future__ import annotations

from .cache import SelectorCache
from .compile import CompiledSelector, SelectorResult, compile_selector, validate_selector
from .errors import CelError
from .limits import CEL_SELECTOR_EXPRESSION_MAX_COST, CEL_SELECTOR_EXPRESSION_MAX_LENGTH

__all__ = [
    "CEL_SELECTOR_EXPRESSION_MAX_COST",
    "CEL_SELECTOR_EXPRESSION_MAX_LENGTH",
    "CelError",
    "CompiledSelector",
    "SelectorCache",
    "SelectorResult",
    "compile_selector",
    "validate_selector",
]
