"""Consumable capacity (DRAConsumableCapacity, beta and on by default in v1.36): how much of a
device's capacity a request consumes, and whether it still fits.

Ported from ``staging/src/k8s.io/dynamic-resource-allocation/structured/internal/incubating/
consumable_capacity.go``. A request that names no amount consumes the capacity's policy default,
or the whole capacity when there is no default; an amount is rounded up to the policy's range
(``min`` + a multiple of ``step``) or to the next valid value, and must then respect ``max`` and
the valid values. Upstream rounds to a step with ``Quantity.Value()``, i.e. whole units rounded
up; this port does the same so that fractional amounts behave as they do in v1.36.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from fractions import Fraction

from .types import CapacityRequestPolicy, DeviceCapacity, DeviceId

__all__ = [
    "CapacityTally",
    "MissingCapacityError",
    "consumed_capacity",
    "fits_capacity",
]

Amounts = Mapping[str, Fraction]


class MissingCapacityError(ValueError):
    """The request names a capacity the device does not have; upstream skips such a device."""


def _whole(value: Fraction) -> int:
    # resource.Quantity.Value(): the value rounded up to an integer.
    return math.ceil(value)


def _round_up_range(requested: Fraction, policy: CapacityRequestPolicy) -> Fraction:
    assert policy.min is not None
    if requested < policy.min:
        return policy.min
    if policy.step is None or _whole(policy.step) == 0:
        return requested
    added = _whole(requested) - _whole(policy.min)
    step = _whole(policy.step)
    n = added // step + (1 if added % step else 0)
    return Fraction(_whole(policy.min) + step * n)


def _round_up_valid_values(requested: Fraction, values: tuple[Fraction, ...]) -> Fraction:
    for value in values:  # sorted ascending by API validation
        if requested <= value:
            return value
    return requested


def _consumed(requested: Fraction | None, capacity: DeviceCapacity) -> Fraction:
    """calculateConsumedCapacity."""
    policy = capacity.request_policy
    if requested is None:
        if policy is not None and policy.default is not None:
            return policy.default
        return capacity.value
    if policy is None:
        return requested
    if policy.min is not None:
        return _round_up_range(requested, policy)
    if policy.valid_values:
        return _round_up_valid_values(requested, policy.valid_values)
    return requested


def _violates(amount: Fraction, policy: CapacityRequestPolicy | None) -> bool:
    """violatesPolicy: the default is always allowed; otherwise max, step and valid values."""
    if policy is None:
        return False
    if policy.default is not None and amount == policy.default:
        return False
    if policy.min is not None:
        if policy.max is not None and amount > policy.max:
            return True
        if policy.step is not None and _whole(policy.step) != 0:
            return (_whole(amount) - _whole(policy.min)) % _whole(policy.step) != 0
        return False
    if policy.valid_values:
        return amount not in policy.valid_values
    return False


def consumed_capacity(requests: Amounts, capacity: Mapping[str, DeviceCapacity]) -> dict[str, Fraction]:
    """GetConsumedCapacityFromRequest: what one allocation of the device consumes, per capacity
    of the device (also those the request does not name)."""
    return {name: _consumed(requests.get(name), cap) for name, cap in sorted(capacity.items())}


def fits_capacity(
    requests: Amounts,
    capacity: Mapping[str, DeviceCapacity],
    already_consumed: Amounts,
    allocating: Amounts,
) -> bool:
    """CmpRequestOverCapacity: does the request, rounded per policy, fit next to what other
    claims consume (``already_consumed``) and what this search has already placed on the device
    (``allocating``)? Raises :class:`MissingCapacityError` when the request names a capacity the
    device lacks."""
    for name in requests:
        if name not in capacity:
            raise MissingCapacityError("some requested capacity has not been defined")
    for name, cap in capacity.items():
        amount = _consumed(requests.get(name), cap)
        if cap.request_policy is not None and _violates(amount, cap.request_policy):
            return False
        # Fractions add slowly: only add what is there (a missing amount is 0).
        total = amount
        used = already_consumed.get(name)
        if used:
            total = used + total
        extra = allocating.get(name)
        if extra:
            total = total + extra
        if total > cap.value:
            return False
    return True


class CapacityTally:
    """ConsumedCapacityCollection: capacity consumed per device by the shares being placed."""

    def __init__(self) -> None:
        self._by_device: dict[DeviceId, dict[str, Fraction]] = {}

    def of(self, device: DeviceId) -> Amounts:
        return self._by_device.get(device, {})

    def add(self, device: DeviceId, amounts: Amounts) -> None:
        sums = self._by_device.setdefault(device, {})
        for name, amount in amounts.items():
            sums[name] = sums.get(name, Fraction(0)) + amount

    def remove(self, device: DeviceId, amounts: Amounts) -> None:
        sums = self._by_device.get(device)
        if sums is None:
            return
        for name, amount in amounts.items():
            if name in sums:
                sums[name] -= amount
        if all(value == 0 for value in sums.values()):
            del self._by_device[device]
