"""The numbers upstream fixes: the API's limits on selectors and devices (``k8s.io/api/resource/v1/types.go``),
cel-go's parser depth, CEL's integer ranges and cel-go's cost factors (``common/cost.go``).
"""

from __future__ import annotations

from typing import Final

# k8s.io/api/resource/v1/types.go
CEL_SELECTOR_EXPRESSION_MAX_LENGTH: Final = 10 * 1024
CEL_SELECTOR_EXPRESSION_MAX_COST: Final = 1_000_000
DRIVER_NAME_MAX_LENGTH: Final = 63
DEVICE_MAX_DOMAIN_LENGTH: Final = 63
DEVICE_MAX_ID_LENGTH: Final = 32
MAX_ATTRIBUTES_AND_CAPACITIES: Final = 32
DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH: Final = 64
MAX_ATTRIBUTE_VALUES: Final = 48
# cel-go's parser default (parser/parser.go maxRecursionDepth).
MAX_RECURSION_DEPTH: Final = 250
U64: Final = 2**64 - 1
I64_MIN: Final = -(2**63)
I64_MAX: Final = 2**63 - 1
STRING_TRAVERSAL: Final = 0.1  # cel-go common/cost.go StringTraversalCostFactor
REGEX_LENGTH: Final = 0.25  # RegexStringLengthCostFactor
LIST_CREATE: Final = 10
MAP_CREATE: Final = 30
