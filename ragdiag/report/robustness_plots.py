"""PNG plots of a robustness result (matplotlib, Agg), after Wang et al. (arXiv 2507.00379):

- ``recall_distribution.png`` — recall histogram of each operating point (their Figure 1);
- ``robustness_vs_recall.png`` — Robustness-δ@K against average recall, one panel per δ (Figures 6–8);
- ``qps_vs_robustness.png`` — batch QPS against Robustness-δ@K, one panel per δ (Figure 10).
"""

from __future__ import annotations

import math
from pathlib import Path


def _label(point: dict) -> str:
    params = ",".join(f"{k}={v}" for k, v in point["params"].items())
    return f"{point['index']} {params}".strip()


def _panels(n: int):
    import matplotlib.pyplot as plt

    cols = min(n, 3)
    rows = math.ceil(n / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.4 * rows), squeeze=False)
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    return fig, list(axes.flat[:n])


def _by_index(points: list[dict]) -> dict[str, list[dict]]:
    groups: dict[str, list[dict]] = {}
    for point in points:
        groups.setdefault(point["spec"], []).append(point)
    return groups


def write_plots(result: dict, out_dir: Path) -> list[Path]:
    """Write the plots that apply (QPS only for index points); return their paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    points, k = result["points"], result["meta"]["k"]
    deltas = list(points[0]["robustness"]) if points else []
    written = []

    fig, axes = _panels(len(points))
    for ax, point in zip(axes, points):
        hist = point["recall_histogram"]
        ax.bar(hist["bins"], hist["counts"], width=0.8 / k)
        ax.set_title(_label(point), fontsize=8)
        ax.set_xlabel(f"recall@{k}")
        ax.set_ylabel("queries")
    fig.suptitle(f"Recall distribution per operating point (mean vs tail), K={k}")
    fig.tight_layout()
    written.append(_save(fig, out_dir / "recall_distribution.png"))

    fig, axes = _panels(len(deltas))
    for ax, delta in zip(axes, deltas):
        for spec, group in _by_index(points).items():
            ax.plot([p["recall_mean"] for p in group], [p["robustness"][delta] for p in group], "o-", label=group[0]["index"])
        ax.set_title(f"δ = {delta}")
        ax.set_xlabel(f"average recall@{k}")
        ax.set_ylabel(f"Robustness-{delta}@{k}")
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    written.append(_save(fig, out_dir / "robustness_vs_recall.png"))

    timed = [p for p in points if p.get("qps_batch")]
    if timed:
        fig, axes = _panels(len(deltas))
        for ax, delta in zip(axes, deltas):
            for spec, group in _by_index(timed).items():
                ax.plot([p["robustness"][delta] for p in group], [p["qps_batch"]["median"] for p in group], "o-",
                        label=group[0]["index"])
            ax.set_yscale("log")
            ax.set_title(f"δ = {delta}")
            ax.set_xlabel(f"Robustness-{delta}@{k}")
            ax.set_ylabel("QPS (batch)")
        axes[0].legend(fontsize=7)
        fig.tight_layout()
        written.append(_save(fig, out_dir / "qps_vs_robustness.png"))
    plt.close("all")
    return written


def _save(fig, path: Path) -> Path:
    fig.savefig(path, dpi=110)
    return path
