"""``compare --metrics``' METRIC@K parser (issue 44): K is an ASCII integer in [1, MAX_K]; anything
else (``ndcg@²``, ``ndcg@99999999999``) is one error naming the part, never a traceback."""

from __future__ import annotations

import pytest

from ragdiag.errors import RagdiagError
from ragdiag.io.lists import MAX_K
from ragdiag.measures.registry import parse_metrics_at


@pytest.mark.parametrize("text", ["ndcg@²", "ndcg@٣", "ndcg@99999999999", f"ndcg@{MAX_K + 1}", "ndcg@0", "ndcg@-1",
                                  "ndcg@+5", "ndcg@1_0"])
def test_a_cut_off_outside_the_range_or_not_ascii_digits_is_refused(text):
    with pytest.raises(RagdiagError, match="--metrics"):
        parse_metrics_at(text)


def test_cut_offs_in_range_parse():
    assert parse_metrics_at(f"ndcg@10, recall@{MAX_K},ndcg@10") == [("ndcg", 10), ("recall", MAX_K)]
