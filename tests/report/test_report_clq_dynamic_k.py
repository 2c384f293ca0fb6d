"""``ragdiag report`` on the result files of ``ragdiag clq --out`` and ``ragdiag dynamic-k --out``
(written by the real commands, conftest ``decision_dir``): the decision first, the tables, the
redrawn plot and the run record; the expected values are read from the result files. A wrong
field of either kind is one error line."""

from __future__ import annotations

import html as html_lib
import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragdiag.cli import app
from ragdiag.measures.registry import label
from ragdiag.report.html.inputs import kind_of
from tests.report.tamper import assert_report_refuses

runner = CliRunner()


def _report(tmp_path: Path, *inputs: Path) -> tuple[str, list[str], str]:
    out = tmp_path / "report.html"
    result = runner.invoke(app, ["report", *map(str, inputs), "--out", str(out)])
    assert result.exit_code == 0, result.output
    page = out.read_text()
    return page, re.findall(r'<section id="[^"]+" data-kind="([^"]+)"', page), result.output


def _section(page: str, kind: str) -> str:
    start = page.index(f'data-kind="{kind}"')
    return page[start:page.index("</section>", start)]


def _text(fragment: str) -> str:
    return html_lib.unescape(re.sub(r"<[^>]+>", "", fragment))


def _decision(section: str) -> list[str]:
    box = re.search(r'<div class="verdict"><strong>Decision</strong><ul>(.*?)</ul></div>', section).group(1)
    return [_text(item) for item in re.findall(r"<li>(.*?)</li>", box)]


def _body_rows(fragment: str) -> list[list[str]]:
    """The first table's body rows of ``fragment``, cells as text."""
    body = fragment[fragment.index("<tbody>"):fragment.index("</tbody>")]
    return [[_text(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row)] for row in re.findall(r"<tr>(.*?)</tr>", body)]


def _rows(section: str) -> dict[str, list[str]]:
    """The first table's body rows by their first cell."""
    return {row[0]: row[1:] for row in _body_rows(section)}


def _label(name: str) -> str:
    metric, k = name.split("@")
    return f"{label(metric)}@{k}"


def test_clq_section_leads_with_the_choices_then_every_configuration(decision_dir, tmp_path):
    doc = json.loads((decision_dir / "clq.json").read_text())
    page, kinds, _ = _report(tmp_path, decision_dir / "clq.json")
    assert kinds == ["clq"]
    section = _section(page, "clq")
    primary, choices = _label(doc["choices"]["primary"]), doc["choices"]
    assert _decision(section) == [
        f"Pareto frontier (cost ↓, latency p50 ↓, {', '.join(map(_label, doc['quality']))} ↑): "
        + ", ".join(doc["frontier"]),
        f"SLO {choices['slo']['percentile']} ≤ {choices['slo']['slo_ms']:g} ms: best {primary} is {choices['slo']['best']}",
        f"budget ≤ {choices['budget']['budget']:g} per 1,000 queries: best {primary} is {choices['budget']['best']}",
        "both: " + (choices["slo_and_budget"]["best"] or "none meets both")]
    assert section.index('class="verdict"') < section.index("<table")  # the decision before the table
    rows = _rows(section)
    assert list(rows) == [c["name"] for c in doc["configs"]]
    for config in doc["configs"]:
        frontier = "★" if config["pareto"] else ", ".join(doc["dominated"][config["name"]])
        assert rows[config["name"]] == [frontier, f"{config['cost']:.2f}", f"{config['latency_p50']:.1f}",
                                        *(f"{config['quality'][q]:.3f}" for q in doc["quality"]),
                                        _num3(config["efficiency_retrieval"])]
    assert "<th>" + _label(doc["quality"][0]) + "</th>" in section
    (marginal,) = doc["marginal"]
    assert f"{marginal['d_quality']:+.3f} over {marginal['d_latency_ms']:+.1f} ms" in _text(section)
    assert section.count("data:image/png;base64,") == 1  # the frontier plot, redrawn
    assert "<summary>run_record</summary>" in section and "TEST SERVER" not in section


def _num3(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def _cheapest_reaching_high(doc: dict, metric: str) -> str:
    """The policy the page must mark for ``metric``, found from the JSON: fixed K_low when its paired
    interval against K_high reaches 0, else the dynamic policy with the fewest mean candidates whose
    interval does, else fixed K_high."""
    policies = doc["policies"]
    if policies[0]["vs_high"][metric]["ci"][1] >= 0:
        return policies[0]["label"]
    reaching = [p for p in policies[1:-1] if p["vs_high"][metric]["ci"][1] >= 0
                and p["mean_candidates"] < policies[-1]["mean_candidates"]]
    return min(reaching, key=lambda p: p["mean_candidates"])["label"] if reaching else policies[-1]["label"]


def test_dynamic_k_section_leads_with_the_policy_that_reaches_k_high(decision_dir, tmp_path):
    doc = json.loads((decision_dir / "dynamic_k.json").read_text())
    page, kinds, _ = _report(tmp_path, decision_dir / "dynamic_k.json")
    assert kinds == ["dynamic-k"]
    section = _section(page, "dynamic-k")
    names = list(doc["policies"][0]["metrics"])
    lead = [n for n in names if n.startswith("ra_nwg@")][-1]
    proc = [n for n in names if n.startswith("proc@")][0]
    low, high = doc["policies"][0], doc["policies"][-1]
    decision = _decision(section)
    assert [line.split(":")[0] for line in decision] == [_label(lead), _label(proc)]
    for line, metric in zip(decision, (lead, proc)):
        assert line.startswith(f"{_label(metric)}: fixed K_low {low['metrics'][metric]['value']:.3f}, "
                               f"fixed K_high {high['metrics'][metric]['value']:.3f}")
    assert section.index('class="verdict"') < section.index("<table")
    rows = _rows(section)
    assert list(rows) == [p["label"] for p in doc["policies"]]
    marked = {metric: [name for name, cells in rows.items() if _label(metric) in cells[0].split(", ")]
              for metric in (lead, proc)}
    assert marked == {metric: [_cheapest_reaching_high(doc, metric)] for metric in (lead, proc)}
    def with_ci(entry: dict, sign: str = "") -> str:
        return f"{entry['value']:{sign}.3f} [{entry['ci'][0]:.3f}, {entry['ci'][1]:.3f}]"

    for policy in doc["policies"]:
        cells = rows[policy["label"]]
        assert cells[1:] == [f"{100 * policy['share_escalated']:.0f}%", f"{policy['mean_candidates']:.1f}",
                             f"{policy['cost_per_1k']:.2f}", with_ci(policy["vs_high"][lead], "+"),
                             with_ci(policy["vs_high"][proc], "+"), f"{policy['vs_low'][lead]['value']:+.3f}",
                             *(f"{policy['metrics'][n]['value']:.3f}" for n in names)]
    every = section[section.index("<details><summary>every metric"):]
    assert f"every metric with its interval and paired differences ({len(names) * len(doc['policies'])} rows)" in every
    assert _body_rows(every) == [[policy["label"], _label(n), with_ci(policy["metrics"][n]),
                                  with_ci(policy["vs_low"][n], "+"), with_ci(policy["vs_high"][n], "+")]
                                 for policy in doc["policies"] for n in names]
    assert section.count("data:image/png;base64,") == 1
    assert "<summary>run_record</summary>" in section and "TEST SERVER" not in section


def test_a_run_folder_shows_each_result_once_with_its_plot_redrawn(decision_dir, tmp_path):
    page, kinds, log = _report(tmp_path, decision_dir)
    assert kinds == ["dynamic-k", "clq"]  # decisions first, in the report's reading order
    assert log.count("its plot is redrawn from the result beside it") == 2  # clq.png, dynamic_k.png
    assert page.count("data:image/png;base64,") == 2


@pytest.mark.parametrize("name", ["clq.json", "dynamic_k.json"])
def test_test_server_inputs_are_labelled(decision_dir, tmp_path, name):
    doc = json.loads((decision_dir / name).read_text())
    doc["run_record"]["models"] = {"judge": "ragdiag-test-server"}
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    page, _, _ = _report(tmp_path, path)
    assert "TEST SERVER — replies are a test server" in page


def test_kinds_by_command_or_keys(decision_dir):
    for name, kind in (("clq.json", "clq"), ("dynamic_k.json", "dynamic-k")):
        doc = json.loads((decision_dir / name).read_text())
        assert kind_of(doc) == kind
        assert kind_of({k: v for k, v in doc.items() if k not in ("meta", "run_record")}) == kind  # library output
    assert kind_of({"meta": {"command": "ragdiag clq"}}) == "clq"
    assert kind_of({"meta": {"command": "ragdiag dynamic-k"}}) == "dynamic-k"


TAMPERED = [
    ("clq.json", ["configs", 1, "cost"], "cheap", "a clq result whose field 'configs[1].cost' is wrong: expected number, got str"),
    ("clq.json", ["configs", 0, "quality", "ra_nwg@10"], KeyError, "field 'configs[0].quality.ra_nwg@10' is wrong: missing"),
    ("clq.json", ["configs", 2, "pareto"], "yes", "field 'configs[2].pareto' is wrong: expected true or false, got str"),
    ("clq.json", ["choices", "slo", "best"], 3, "field 'choices.slo.best' is wrong: expected text or null, got int"),
    ("clq.json", ["dominated", "high-K"], "baseline", "field 'dominated.high-K' is wrong: expected a list, got str"),
    ("dynamic_k.json", ["signal", "median"], None, "a dynamic-k result whose field 'signal.median' is wrong: "
                                                   "expected number, got null"),
    ("dynamic_k.json", ["policies", 2, "metrics", "proc@5", "ci"], "wide",
     "field 'policies[2].metrics.proc@5.ci' is wrong: expected a list or null, got str"),
    ("dynamic_k.json", ["policies", 3, "vs_high", "ra_nwg@10"], KeyError, "field 'policies[3].vs_high.ra_nwg@10' is wrong: missing"),
    ("dynamic_k.json", ["policies"], [], "field 'policies' is wrong: expected fixed K_low, the thresholds and fixed K_high"),
    ("dynamic_k.json", ["params", "ks"], "5,10", "field 'params.ks' is wrong: expected a list, got str"),
]


@pytest.mark.parametrize("name, path, value, needle", TAMPERED, ids=[f"{t[0]}:{'.'.join(map(str, t[1]))}" for t in TAMPERED])
def test_a_wrong_field_is_one_error_line(decision_dir, tmp_path, name, path, value, needle):
    assert_report_refuses(json.loads((decision_dir / name).read_text()), path, value, needle, tmp_path / name)


def test_dynamic_k_without_intervals_says_so(tmp_path):
    """``--bootstrap 0``: the intervals are null; the section shows the differences alone and says why."""
    runs = Path(__file__).resolve().parents[1] / "evaluate" / "golden" / "dynamic_k"
    out = tmp_path / "dynamic_k.json"
    done = runner.invoke(app, ["dynamic-k", "--qrels", str(runs / "qrels.tsv"), "--run-low", str(runs / "low.jsonl"),
                               "--run-high", str(runs / "high.jsonl"), "--k-low", "10", "--k-high", "20", "--ks", "5,10",
                               "--steps", "4", "--bootstrap", "0", "--out", str(out)])
    assert done.exit_code == 0, done.output
    doc = json.loads(out.read_text())
    page, kinds, _ = _report(tmp_path, out)
    section = _section(page, "dynamic-k")
    assert kinds == ["dynamic-k"] and "Δ = paired difference (--bootstrap 0: no intervals)" in section
    lead = [n for n in doc["policies"][0]["metrics"] if n.startswith("ra_nwg@")][-1]
    for policy in doc["policies"]:
        assert policy["vs_high"][lead]["ci"] is None
        assert _rows(section)[policy["label"]][3] == f"{policy['vs_high'][lead]['value']:+.3f}"  # no cost column


def test_clq_with_p95_and_end_to_end_latency_shows_their_columns(tmp_path):
    """Configurations with p95 and end-to-end latency (an SLO on p95): the section adds the p95, e2e
    and end-to-end efficiency columns, with the values of the result file."""
    configs = tmp_path / "configs.csv"
    configs.write_text("name,family,k,cost_per_1k,latency_p50_ms,latency_p95_ms,e2e_p50_ms,ra_nwg@10,nrecall4@10,"
                       "ra_nwg@30,nrecall4@30\n"
                       "small,dense,10,1.0,100,180,900,0.70,0.60,0.72,0.66\n"
                       "large,dense,20,2.0,150,260,1000,0.75,0.62,0.78,0.70\n"
                       "sparse,bm25,10,0.5,90,300,950,0.65,0.66,0.70,0.69\n")
    out = tmp_path / "clq.json"
    done = runner.invoke(app, ["clq", "--configs", str(configs), "--slo-ms", "250", "--slo-percentile", "p95",
                               "--out", str(out)])
    assert done.exit_code == 0, done.output
    doc = json.loads(out.read_text())
    page, kinds, _ = _report(tmp_path, out)
    section = _section(page, "clq")
    slo = doc["choices"]["slo"]
    assert _decision(section)[1] == f"SLO p95 ≤ {slo['slo_ms']:g} ms: best {_label(doc['choices']['primary'])} is {slo['best']}"
    assert "<th>p95 ms</th><th>e2e p50 ms</th><th>eff. e2e</th>" in section
    rows = _rows(section)
    for config in doc["configs"]:
        assert rows[config["name"]][-4:] == [f"{config['efficiency_retrieval']:.3f}", f"{config['latency_p95']:.1f}",
                                             f"{config['e2e_p50']:.1f}", f"{config['efficiency_e2e']:.3f}"]
