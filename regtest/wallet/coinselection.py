"""Coin selection as Bitcoin Core's wallet does it, per asset as Elements does
(docs/node-rpc.md §1.9).

Pure functions over ``Candidate`` coins (no wallet, no I/O): Branch and Bound, Single Random
Draw and the knapsack solver of Core's ``src/wallet/coinselection.cpp``, and
``choose_selection`` = ``ChooseSelectionResult`` of ``src/wallet/spend.cpp``, which runs them
and keeps the result with the least *waste*:

    waste = Σ inputs (fee now − fee at the long-term rate)
            + (cost of change, when the result makes change, else the excess dropped to fees)

ties going to the result with more inputs.

Elements' rules for confidential assets (``coinselection.cpp`` and ``spend.cpp`` of Elements):

- a coin's *effective value* counts only for the policy asset: ``value − fee`` for a policy
  coin, ``−fee`` for any other (its input fee is paid in the policy asset);
- BnB and SRD run only when the one target is the policy asset; with several assets the
  knapsack solver runs once per non-policy asset (over that asset's coins, by value), then once
  for the policy asset with the other assets' input fees added to its target.

Randomness (SRD's draw, knapsack's shuffle and stochastic passes, the random change target)
comes from the ``random.Random`` the caller passes: Core uses a fast non-cryptographic RNG for
the same purpose (privacy against fingerprinting, not security), and a seeded one keeps the
wallet's transactions reproducible.
"""

from __future__ import annotations

import heapq
import random
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

CHANGE_LOWER = 50_000
"""Lower bound of the random change target (coinselection.h ``CHANGE_LOWER``)."""
CHANGE_UPPER = 1_000_000
"""Upper bound of the random change target (coinselection.h ``CHANGE_UPPER``)."""
TOTAL_TRIES = 100_000
"""BnB's search budget (coinselection.cpp ``TOTAL_TRIES``)."""
KNAPSACK_ITERATIONS = 1000
"""``ApproximateBestSubset``'s default number of repetitions."""
DEFAULT_DISCARD_FEE = 10_000
"""sat/kvB: the rate below which change is not worth keeping (wallet.h ``DEFAULT_DISCARD_FEE``)."""
DEFAULT_CONSOLIDATE_FEERATE = 10_000
"""sat/kvB: the long-term fee rate of the waste metric (wallet.h ``-consolidatefeerate``)."""


class Algorithm:
    BNB = "bnb"
    KNAPSACK = "knapsack"
    SRD = "srd"


def fee_at(rate: int, vsize: int) -> int:
    """``CFeeRate::GetFee``: ``rate`` sat/kvB for ``vsize`` bytes, rounded up (and at least 1 sat
    for a non-zero rate and size, as Core's rounding gives)."""
    if rate <= 0 or vsize <= 0:
        return 0
    return -(-rate * vsize // 1000)


@dataclass(frozen=True, slots=True)
class Candidate:
    """One spendable coin: ``key`` identifies it (the outpoint), ``fee`` / ``long_term_fee`` are
    the fees of its input at the effective and the long-term fee rate."""

    key: Hashable
    asset: bytes
    value: int
    fee: int = 0
    long_term_fee: int = 0
    weight: int = 0  # 4 × the input's vsize (Core's m_weight); 0: unknown, never limits

    def effective_value(self, policy_asset: bytes) -> int:
        """Elements' ``COutput::effective_value``: only the policy asset pays for inputs."""
        return (self.value if self.asset == policy_asset else 0) - self.fee

    def selection_amount(self, policy_asset: bytes, subtract_fee_outputs: bool = False) -> int:
        """``OutputGroup::GetSelectionAmount``: non-policy coins always by value; policy coins by
        effective value (by value when the recipients pay the fee)."""
        if self.asset != policy_asset or subtract_fee_outputs:
            return self.value
        return self.effective_value(policy_asset)


@dataclass(slots=True)
class Selection:
    """A selection result (Core's ``SelectionResult``): the coins, the per-asset target they
    were chosen for, which algorithm chose them and, once computed, their waste."""

    target: dict[bytes, int]
    algorithm: str
    coins: list[Candidate] = field(default_factory=list)
    waste: int | None = None

    def selected_value(self) -> dict[bytes, int]:
        totals: dict[bytes, int] = {}
        for coin in self.coins:
            totals[coin.asset] = totals.get(coin.asset, 0) + coin.value
        return totals

    def selected_effective_value(self, policy_asset: bytes) -> dict[bytes, int]:
        """Per asset: values, with every input fee taken from the policy asset (Elements)."""
        totals: dict[bytes, int] = {}
        for coin in self.coins:
            totals[coin.asset] = totals.get(coin.asset, 0) + coin.value
            totals[policy_asset] = totals.get(policy_asset, 0) - coin.fee
        return totals

    def change(self, policy_asset: bytes, min_viable_change: int, change_fee: int,
               use_effective: bool = True) -> dict[bytes, int]:
        """``SelectionResult::GetChange``: what is left per asset after the target and (with
        effective values) the change output's fee; nothing when the policy asset's part is
        below ``min_viable_change``."""
        have = (self.selected_effective_value(policy_asset) if use_effective
                else self.selected_value())
        left = {asset: have.get(asset, 0) - self.target.get(asset, 0)
                for asset in {*have, *self.target}}
        if use_effective:
            left[policy_asset] = left.get(policy_asset, 0) - change_fee
        if left.get(policy_asset, 0) < min_viable_change:
            return {}
        return {asset: amount for asset, amount in left.items() if amount}

    def recalculate_waste(self, policy_asset: bytes, min_viable_change: int, change_cost: int,
                          change_fee: int, use_effective: bool = True) -> int:
        """``SelectionResult::RecalculateWaste`` (module docstring)."""
        waste = sum(c.fee - c.long_term_fee for c in self.coins)
        if self.change(policy_asset, min_viable_change, change_fee, use_effective):
            waste += change_cost
        else:
            have = (self.selected_effective_value(policy_asset) if use_effective
                    else self.selected_value())
            if all(have.get(a, 0) >= v for a, v in self.target.items()):
                waste += sum(have.get(a, 0) - self.target.get(a, 0)
                             for a in {*have, *self.target})
        self.waste = waste
        return waste

    def better_than(self, other: Selection) -> bool:
        """``SelectionResult::operator<``: less waste, or as much with more inputs."""
        assert self.waste is not None and other.waste is not None
        return self.waste < other.waste or (self.waste == other.waste
                                             and len(self.coins) > len(other.coins))


# --- Branch and Bound ---------------------------------------------------------------------------


def select_bnb(pool: Sequence[Candidate], target: int, cost_of_change: int, *,
               policy_asset: bytes, max_weight: int | None = None) -> Selection | None:
    """``SelectCoinsBnB``: a changeless input set whose effective value lies in
    [target, target + cost_of_change], the least wasteful one the depth-first search (inclusion
    branch first, largest coins first, at most ``TOTAL_TRIES`` steps) finds; None if none."""
    coins = [c for c in pool if c.selection_amount(policy_asset) > 0]
    available = sum(c.selection_amount(policy_asset) for c in coins)
    if not coins or available < target:
        return None
    # Core's ``descending``: by selection amount, ties by the lower waste (fee − long-term fee)
    coins.sort(key=lambda c: (-c.selection_amount(policy_asset), c.fee - c.long_term_fee))
    amounts = [c.selection_amount(policy_asset) for c in coins]
    feerate_high = coins[0].fee > coins[0].long_term_fee
    value = waste = weight = 0
    selection: list[int] = []
    best: list[int] = []
    best_waste: int | None = None
    index = 0
    for _ in range(TOTAL_TRIES):
        backtrack = False
        out_of_range = (value + available < target or value > target + cost_of_change
                        or (best_waste is not None and waste > best_waste and feerate_high))
        too_heavy = max_weight is not None and weight > max_weight
        if out_of_range or too_heavy:
            backtrack = True
        elif value >= target:
            excess_waste = waste + value - target
            if best_waste is None or excess_waste <= best_waste:
                best, best_waste = list(selection), excess_waste
            backtrack = True
        if backtrack:
            if not selection:
                break
            index -= 1
            while index > selection[-1]:  # omitted coins return to the lookahead
                available += amounts[index]
                index -= 1
            coin = coins[index]
            value -= amounts[index]
            waste -= coin.fee - coin.long_term_fee
            weight -= coin.weight
            selection.pop()
        else:
            coin = coins[index]
            available -= amounts[index]
            previous_excluded = selection and selection[-1] != index - 1
            same_as_previous = (index > 0 and amounts[index] == amounts[index - 1]
                                and coin.fee == coins[index - 1].fee)
            if not selection or not previous_excluded or not same_as_previous:
                selection.append(index)
                value += amounts[index]
                waste += coin.fee - coin.long_term_fee
                weight += coin.weight
        index += 1  # past the last coin every branch above backtracks (nothing left to add)
    if best_waste is None:
        return None
    result = Selection({policy_asset: target}, Algorithm.BNB, [coins[i] for i in best])
    result.recalculate_waste(policy_asset, cost_of_change, cost_of_change, 0)
    return result


# --- Single Random Draw -------------------------------------------------------------------------


def select_srd(pool: Sequence[Candidate], target: int, change_fee: int, rng: random.Random, *,
               policy_asset: bytes, max_weight: int | None = None) -> Selection | None:
    """``SelectCoinsSRD``: coins in random order until their effective value covers ``target``
    plus ``CHANGE_LOWER`` and the change output's fee; over the weight limit the least valuable
    ones are dropped again."""
    coins = [c for c in pool if c.selection_amount(policy_asset) > 0]
    goal = target + CHANGE_LOWER + change_fee
    order = list(range(len(coins)))
    rng.shuffle(order)
    heap: list[tuple[int, int]] = []  # (selection amount, index): smallest on top
    total = weight = 0
    for i in order:
        coin = coins[i]
        amount = coin.selection_amount(policy_asset)
        heapq.heappush(heap, (amount, i))
        total += amount
        weight += coin.weight
        while max_weight is not None and weight > max_weight and heap:
            small, j = heapq.heappop(heap)
            total -= small
            weight -= coins[j].weight
        if total >= goal:
            return Selection({policy_asset: target}, Algorithm.SRD,
                             [coins[j] for _, j in sorted(heap, reverse=True)])
    return None


# --- knapsack -----------------------------------------------------------------------------------


def _approximate_best_subset(rng: random.Random, amounts: Sequence[int], total_lower: int,
                             target: int, iterations: int = KNAPSACK_ITERATIONS
                             ) -> tuple[list[bool], int]:
    """``ApproximateBestSubset``: random inclusion passes, keeping the smallest total ≥ target."""
    best = [True] * len(amounts)
    best_total = total_lower
    for _ in range(iterations):
        if best_total == target:
            break
        included = [False] * len(amounts)
        total = 0
        reached = False
        for pass_number in range(2):
            if reached:
                break
            for i, amount in enumerate(amounts):
                take = rng.getrandbits(1) == 1 if pass_number == 0 else not included[i]
                if not take:
                    continue
                total += amount
                included[i] = True
                if total >= target:
                    reached = True
                    if total < best_total:
                        best_total = total
                        best = list(included)
                    total -= amount
                    included[i] = False
    return best, best_total


def knapsack_single(pool: Sequence[Candidate], target: int, change_target: int,
                    rng: random.Random, *, policy_asset: bytes,
                    subtract_fee_outputs: bool = False) -> list[Candidate] | None:
    """Core's single-asset ``KnapsackSolver``: an exact match, all smaller coins when they add
    up exactly, the smallest larger coin, or the best stochastic subset (aiming at ``target``,
    then at ``target + change_target``), whichever is closest."""
    coins = list(pool)
    rng.shuffle(coins)

    def amount(c: Candidate) -> int:
        return c.selection_amount(policy_asset, subtract_fee_outputs)

    lowest_larger: Candidate | None = None
    applicable: list[Candidate] = []
    total_lower = 0
    for coin in coins:
        a = amount(coin)
        if a == target:
            return [coin]
        if a < target + change_target:
            applicable.append(coin)
            total_lower += a
        elif lowest_larger is None or a < amount(lowest_larger):
            lowest_larger = coin
    if total_lower == target:
        return applicable
    if total_lower < target:
        return [lowest_larger] if lowest_larger is not None else None
    applicable.sort(key=lambda c: -amount(c))
    amounts = [amount(c) for c in applicable]
    chosen, best = _approximate_best_subset(rng, amounts, total_lower, target)
    if best != target and total_lower >= target + change_target:
        chosen, best = _approximate_best_subset(rng, amounts, total_lower,
                                                target + change_target)
    if lowest_larger is not None and ((best != target and best < target + change_target)
                                      or amount(lowest_larger) <= best):
        return [lowest_larger]
    return [c for c, take in zip(applicable, chosen) if take]


def knapsack(pool: Sequence[Candidate], targets: Mapping[bytes, int], change_target: int,
             rng: random.Random, *, policy_asset: bytes,
             subtract_fee_outputs: bool = False) -> Selection | None:
    """Elements' multi-asset ``KnapsackSolver`` (module docstring): each non-policy asset over
    its own coins, then the policy asset with their input fees added to its target."""
    result = Selection(dict(targets), Algorithm.KNAPSACK)
    used: set[Hashable] = set()
    extra_fees = 0
    for asset, amount in sorted(targets.items()):
        if amount == 0 or asset == policy_asset:
            continue
        coins = [c for c in pool if c.asset == asset and c.key not in used]
        if not coins:
            return None
        chosen = knapsack_single(coins, amount, change_target, rng, policy_asset=policy_asset,
                                 subtract_fee_outputs=subtract_fee_outputs)
        if chosen is None:
            return None
        result.coins.extend(chosen)
        used.update(c.key for c in chosen)
        extra_fees += sum(c.fee for c in chosen)
    policy_target = targets.get(policy_asset, 0) + extra_fees
    if policy_target > 0:
        coins = [c for c in pool if c.asset == policy_asset and c.key not in used]
        if not coins:
            return None
        chosen = knapsack_single(coins, policy_target, change_target, rng,
                                 policy_asset=policy_asset,
                                 subtract_fee_outputs=subtract_fee_outputs)
        if chosen is None:
            return None
        result.coins.extend(chosen)
    have = result.selected_value()
    if any(have.get(a, 0) < v for a, v in targets.items()):
        return None
    return result


# --- choosing -----------------------------------------------------------------------------------


def change_target(payment_value: int, change_fee: int, rng: random.Random) -> int:
    """``GenerateChangeTarget``: ``CHANGE_LOWER`` for small payments, else a random value in
    [CHANGE_LOWER, min(2 × payment, CHANGE_UPPER)), plus the change output's fee."""
    if payment_value <= CHANGE_LOWER // 2:
        return change_fee + CHANGE_LOWER
    upper = min(payment_value * 2, CHANGE_UPPER)
    return change_fee + rng.randrange(upper - CHANGE_LOWER) + CHANGE_LOWER


@dataclass(frozen=True, slots=True)
class SelectionParams:
    """Core's ``CoinSelectionParams`` as far as the algorithms read them (fees in satoshis)."""

    policy_asset: bytes
    change_fee: int  # creating the change output now, at the effective rate
    cost_of_change: int  # change_fee + spending the change later at the discard rate
    min_change_target: int  # GenerateChangeTarget's draw
    min_viable_change: int  # the smallest change worth making (dust / spend cost)
    subtract_fee_outputs: bool = False
    max_weight: int | None = None


def choose_selection(pool: Iterable[Candidate], targets: Mapping[bytes, int],
                     params: SelectionParams, rng: random.Random) -> Selection | None:
    """``ChooseSelectionResult``: BnB and SRD when the one target is the policy asset, the
    knapsack solver always; the least wasteful result (module docstring), or None."""
    coins = list(pool)
    policy = params.policy_asset
    wanted = {a: v for a, v in targets.items() if v or a == policy}
    results: list[Selection] = []
    change_fee = 0 if params.subtract_fee_outputs else params.change_fee
    if set(wanted) == {policy}:
        target = wanted[policy]
        own = [c for c in coins if c.asset == policy]
        if not params.subtract_fee_outputs:
            bnb = select_bnb(own, target, params.cost_of_change, policy_asset=policy,
                             max_weight=params.max_weight)
            if bnb is not None:
                results.append(bnb)
        # Elements' ChooseSelectionResult asks SRD for the target with change plus
        # CHANGE_LOWER, and SelectCoinsSRD adds CHANGE_LOWER and the change fee once more
        srd = select_srd(own, target + change_fee + CHANGE_LOWER, params.change_fee, rng,
                         policy_asset=policy, max_weight=params.max_weight)
        if srd is not None:
            results.append(srd)
    with_change = dict(wanted)
    with_change[policy] = with_change.get(policy, 0) + change_fee
    found = knapsack(coins, with_change, params.min_change_target, rng, policy_asset=policy,
                     subtract_fee_outputs=params.subtract_fee_outputs)
    if found is not None:
        found.target = dict(wanted)
        results.append(found)
    if not results:
        return None
    best: Selection | None = None
    for result in results:
        result.target = dict(wanted)
        result.recalculate_waste(policy, params.min_viable_change, params.cost_of_change,
                                 params.change_fee,
                                 use_effective=not params.subtract_fee_outputs)
        if best is None or result.better_than(best):
            best = result
    return best
