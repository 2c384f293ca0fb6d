"""The certificate on SciFact with its human qrels and twelve real BM25 configurations: the human
qrels against themselves give τ = 1, and random labels pull τ down as their share grows (issue 40).
Skips where the workplace copy of SciFact is absent."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragdiag.commands.testset import CertifyRequest, certify_run
from ragdiag.testset.certify import CertifyOptions
from tests.testset.scifact_runs import build_runs, degraded_qrels, shared_scifact

SCIFACT = shared_scifact()
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(SCIFACT is None, reason="SciFact is not beside the clone (../shared/data/scifact)")]


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> list[Path]:
    assert SCIFACT is not None
    return build_runs(SCIFACT, tmp_path_factory.mktemp("scifact-runs"))


def _tau(qrels: Path, runs: list[Path]) -> float:
    assert SCIFACT is not None
    result = certify_run(CertifyRequest(qrels, SCIFACT, runs, "ndcg@10", CertifyOptions(bootstrap=200)))
    assert result.tau is not None and result.tau.value is not None
    return result.tau.value


def test_human_qrels_against_themselves_and_degraded(runs, tmp_path):
    assert SCIFACT is not None and len(runs) >= 10
    assert _tau(SCIFACT / "qrels" / "test.tsv", runs) == 1.0
    taus = [_tau(degraded_qrels(SCIFACT, tmp_path, "random", share, 0), runs) for share in (0.25, 0.75, 1.0)]
    assert taus[0] > taus[2] and taus[1] > taus[2] and taus[2] < 0.5, taus
