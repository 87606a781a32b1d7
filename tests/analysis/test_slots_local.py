"""slots_local.slot_table without Spark: its order (what series_local.summarise relies on when
told the rows are presorted), ties in time, slots without values, and no rows at all. Agreement
with Spark's slot_stats on the same rows is in test_aggregate.py."""

from __future__ import annotations

import math

import numpy as np

from flinktune.analysis import aggregate, series_local, slots_local


def _k(sub: int, mkey: int, slot: int) -> int:
    return (sub << 32) + (mkey << aggregate.SLOT_BITS) + slot


def test_rows_come_out_in_series_and_slot_order_one_per_slot() -> None:
    keys = [_k(1, 9, 0), _k(0, 9, 3), _k(0, 9, 1), _k(0, 2, 5), _k(1, 9, 0), _k(-1, 2, 0)]
    jobs = [7, 7, 7, 7, 7, -3]
    out = slots_local.slot_table(np.array(jobs), np.full(6, 11), np.array(keys), np.arange(6) * 10,
                                 np.arange(6, dtype=np.float64))
    got = list(zip(out["job_hash"].tolist(), out["subtask_index"].tolist(), out["mkey"].tolist(),
                   out["slot"].tolist(), strict=True))
    assert got == [(-3, -1, 2, 0), (7, 0, 2, 5), (7, 0, 9, 1), (7, 0, 9, 3), (7, 1, 9, 0)]
    assert out["n"].tolist() == [1, 1, 1, 1, 2]
    # summarise gives the same series whether it sorts or trusts the order.
    sorted_rows, _ = series_local.summarise(out, 0.0, None, presorted=True)
    shuffled = {c: a[::-1].copy() for c, a in out.items()}
    assert series_local.summarise(shuffled, 0.0, None)[0] == sorted_rows


def test_ties_in_time_take_the_first_row_read() -> None:
    # Spark's min_by / max_by keep the first row read among equal orderings.
    k = np.full(4, _k(0, 1, 0))
    out = slots_local.slot_table(np.zeros(4), np.zeros(4), k, np.array([5, 5, 9, 9]),
                                 np.array([1.0, 2.0, 3.0, 4.0]))
    assert (out["v0"][0], out["v1"][0], out["t0"][0], out["t1"][0]) == (1.0, 3.0, 5, 9)


def test_a_slot_of_missing_values_counts_none_and_sums_to_null() -> None:
    out = slots_local.slot_table(np.zeros(2), np.zeros(2), np.full(2, _k(0, 1, 0)), np.array([1, 2]),
                                 np.array([math.nan, math.nan]))
    assert out["n"].tolist() == [0] and math.isnan(out["s"][0]) and math.isnan(out["mx"][0])


def test_no_rows_gives_an_empty_table_with_every_column() -> None:
    empty = np.zeros(0)
    out = slots_local.slot_table(empty, empty, empty, empty, empty)
    assert set(out) == set(aggregate.SLOT_COLUMNS) and all(len(a) == 0 for a in out.values())
    assert series_local.summarise(out, 0.1, None, presorted=True)[0] == []
