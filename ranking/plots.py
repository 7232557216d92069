"""Leaderboard figures (paper Figures 4-6) drawn with matplotlib's Agg canvas, SVG or PNG.

Each plot takes a leaderboard result (the JSON of `services.leaderboard_current`) and
returns the encoded image. Figures are built with `matplotlib.figure.Figure`, never
pyplot, so concurrent requests in one process share no global state, and no backend is chosen
at import (`savefig` draws SVG and PNG with their own canvases whatever the backend).
"""

from __future__ import annotations

import io
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # matplotlib loads with the first figure drawn (workers), not at import
    from matplotlib.axes import Axes
    from matplotlib.colors import Colormap
    from matplotlib.figure import Figure
    from matplotlib.image import AxesImage

AXES = ("H", "E", "A", "R", "T")
FORMATS = {"svg": "image/svg+xml", "png": "image/png"}
#: PNG downloads are for print (papers, posters): 300 dots per inch at the figure's size.
PNG_DPI = 300
KIND_COLOURS = {"human": "#b5179e", "dataset": "#6c757d", "model": "#0b5cad"}
# Figure 6's palette: light pink for rarely used strategies, dark teal for frequent ones.
STRATEGY_COLOURS = ["#fbe3ec", "#8fd3c9", "#00595a"]
HEAT_CMAP = "viridis"


def _figure(width: float, height: float) -> Figure:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=110, layout="constrained")
    fig.set_facecolor("white")
    return fig


def _empty(fig: Figure, message: str) -> Figure:
    ax = fig.add_subplot()
    ax.axis("off")
    ax.text(0.5, 0.5, message, ha="center", va="center", fontsize=12, color="#4a4a4a")
    return fig


def _rows_height(n: int) -> float:
    return max(2.5, 0.9 + 0.32 * n)


def forest(result: dict[str, Any]) -> Figure:
    """Elo with its confidence interval per system, best at the top."""
    systems = result.get("systems", [])
    fig = _figure(7.5, _rows_height(len(systems)))
    if not systems:
        return _empty(fig, "No comparisons yet")
    ax = fig.add_subplot()
    for y, row in enumerate(reversed(systems)):
        colour = KIND_COLOURS.get(row.get("kind") or "model", "#0b5cad")
        low = row["ci_low"] if row["ci_low"] is not None else row["elo"]
        high = row["ci_high"] if row["ci_high"] is not None else row["elo"]
        ax.plot([low, high], [y, y], color=colour, linewidth=2)
        ax.plot(row["elo"], y, "o", color=colour, markersize=6)
    ax.set_yticks(range(len(systems)), [row["system"] for row in reversed(systems)])
    ax.axvline(1500, color="#999999", linestyle=":", linewidth=1)
    ax.set_xlabel("Elo (95% CI)")
    ax.set_title(
        f"Bradley–Terry Elo — judges: {result.get('judges')}, contexts: {result.get('subset')}",
        fontsize=10,
    )
    ax.grid(axis="x", alpha=0.3)
    return fig


def _heatmap(
    ax: Axes,
    values: list[list[float | None]],
    cmap: str | Colormap,
    vmin: float,
    vmax: float,
    fmt: Callable[[float], str],
    light_text: Callable[[float], bool],
) -> AxesImage:
    """Annotated heatmap; `light_text(share)` says where the cell is dark enough for white."""
    data = [[math.nan if v is None else v for v in row] for row in values]
    image = ax.imshow(data, cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto")
    span = vmax - vmin or 1.0
    for i, row in enumerate(data):
        for j, value in enumerate(row):
            if not math.isnan(value):
                ax.text(
                    j,
                    i,
                    fmt(value),
                    ha="center",
                    va="center",
                    fontsize=8,
                    color="white" if light_text((value - vmin) / span) else "black",
                )
    return image


def axes_heatmap(result: dict[str, Any]) -> Figure:
    """Figure 4: per-axis win rates (H/E/A/R/T) and overall, systems sorted by Elo."""
    systems = result.get("systems", [])
    fig = _figure(7.5, _rows_height(len(systems)))
    if not systems:
        return _empty(fig, "No comparisons yet")
    ax = fig.add_subplot()
    columns = [*AXES, "overall"]
    values = [
        [row["axes"].get(a) if a in AXES else row.get("win_rate") for a in columns]
        for row in systems
    ]
    image = _heatmap(
        ax, values, HEAT_CMAP, 0.0, 1.0, lambda v: f"{100 * v:.0f}", lambda share: share < 0.6
    )
    ax.set_xticks(range(len(columns)), columns)
    ax.set_yticks(range(len(systems)), [f"{row['system']} ({row['elo']:.0f})" for row in systems])
    ax.set_title("Win rate (%) per HEART axis; Elo in brackets", fontsize=10)
    fig.colorbar(image, ax=ax, label="win rate")
    return fig


def axes_percentile(result: dict[str, Any]) -> Figure:
    """Figure 4's view: each system's percentile on H/E/A/R/T from the per-axis
    Bradley–Terry fits, darker = higher; overall Elo in brackets, systems by Elo."""
    section = result.get("axis_fits") or {}
    axes = section.get("axes", [])
    rows = section.get("systems", [])
    fig = _figure(7.5, _rows_height(len(rows)))
    if not axes or not rows:
        return _empty(fig, "No axis marks yet: turn on axis marks in the study settings")
    ax = fig.add_subplot()
    values = [[row["axes"].get(a, {}).get("percentile") for a in axes] for row in rows]
    image = _heatmap(
        ax, values, "Blues", 0.0, 100.0, lambda v: f"{v:.0f}", lambda share: share > 0.6
    )
    elo = {row["system"]: row["elo"] for row in result.get("systems", [])}
    ax.set_xticks(range(len(axes)), axes)
    ax.set_yticks(
        range(len(rows)),
        [f"{row['system']} ({elo.get(row['system'], float('nan')):.0f})" for row in rows],
    )
    ax.set_title("Percentile per HEART axis (per-axis Bradley–Terry); Elo in brackets", fontsize=10)
    fig.colorbar(image, ax=ax, label="percentile")
    return fig


def win_matrix(result: dict[str, Any]) -> Figure:
    """Share of comparisons the row system won against the column system (ties half)."""
    matrix = result.get("win_matrix") or {}
    names = matrix.get("systems", [])
    fig = _figure(max(5.0, 1.8 + 0.55 * len(names)), max(4.0, 1.5 + 0.45 * len(names)))
    if not names:
        return _empty(fig, "No comparisons yet")
    ax = fig.add_subplot()
    image = _heatmap(
        ax,
        matrix["rates"],
        "RdBu",
        0.0,
        1.0,
        lambda v: f"{v:.2f}",
        lambda share: abs(share - 0.5) > 0.3,
    )
    ax.set_xticks(range(len(names)), names, rotation=45, ha="right")
    ax.set_yticks(range(len(names)), names)
    ax.set_xlabel("opponent")
    ax.set_title("Win rate of row vs column", fontsize=10)
    fig.colorbar(image, ax=ax, label="row wins")
    return fig


def predicted_matrix(result: dict[str, Any]) -> Figure:
    """The Bradley–Terry predicted probability that the row system beats the column system."""
    matrix = result.get("win_matrix") or {}
    names = matrix.get("systems", [])
    fig = _figure(max(5.0, 1.8 + 0.55 * len(names)), max(4.0, 1.5 + 0.45 * len(names)))
    if not names or not matrix.get("predicted"):
        return _empty(fig, "No comparisons yet")
    ax = fig.add_subplot()
    image = _heatmap(
        ax,
        matrix["predicted"],
        "RdBu",
        0.0,
        1.0,
        lambda v: f"{v:.2f}",
        lambda share: abs(share - 0.5) > 0.3,
    )
    ax.set_xticks(range(len(names)), names, rotation=45, ha="right")
    ax.set_yticks(range(len(names)), names)
    ax.set_xlabel("opponent")
    ax.set_title("Predicted by Bradley–Terry: probability row beats column", fontsize=10)
    fig.colorbar(image, ax=ax, label="row wins (predicted)")
    return fig


def strategies(result: dict[str, Any]) -> Figure:
    """Figure 6: strategy usage (%) per family, strategies sorted by overall usage."""
    from matplotlib.colors import LinearSegmentedColormap

    section = result.get("strategies") or {}
    families, names = section.get("families", []), section.get("strategies", [])
    fig = _figure(max(6.0, 3.5 + 0.8 * len(families)), _rows_height(len(names)))
    if not names:
        return _empty(fig, "No strategy labels yet")
    ax = fig.add_subplot()
    image = _heatmap(
        ax,
        section["usage"],
        LinearSegmentedColormap.from_list("heart", STRATEGY_COLOURS),
        0.0,
        100.0,
        lambda v: f"{v:.0f}",
        lambda share: share > 0.55,
    )
    ax.set_xticks(range(len(families)), families, rotation=30, ha="right")
    ax.set_yticks(range(len(names)), names)
    ax.set_title("Strategy usage (% of completions) per family", fontsize=10)
    fig.colorbar(image, ax=ax, label="usage %")
    return fig


def elo_vs_ttft(result: dict[str, Any]) -> Figure:
    """Figure 5: Elo against median time to first token (log scale), field mean dashed."""
    import matplotlib

    points = [row for row in result.get("systems", []) if row.get("ttft_ms")]
    fig = _figure(7.0, 4.5)
    if not points:
        return _empty(fig, "No time-to-first-token data")
    ax = fig.add_subplot()
    families = sorted({row.get("family") or row.get("kind") or "-" for row in points})
    palette = matplotlib.colormaps["tab10"]
    for i, family in enumerate(families):
        group = [row for row in points if (row.get("family") or row.get("kind") or "-") == family]
        ax.scatter(
            [row["ttft_ms"] for row in group],
            [row["elo"] for row in group],
            color=palette(i % 10),
            label=family,
            s=40,
        )
        for row in group:
            ax.annotate(
                row["system"],
                (row["ttft_ms"], row["elo"]),
                fontsize=7,
                xytext=(4, 3),
                textcoords="offset points",
            )
    mean = sum(row["elo"] for row in result["systems"]) / len(result["systems"])
    ax.axhline(mean, color="#555555", linestyle="--", linewidth=1, label="field mean")
    ax.set_xscale("log")
    ax.set_xlabel("median time to first token (ms, log scale)")
    ax.set_ylabel("Elo")
    ax.legend(fontsize=7, loc="best")
    ax.grid(alpha=0.3)
    return fig


PLOTS: dict[str, tuple[Callable[[dict[str, Any]], Figure], str]] = {
    "forest": (forest, "Forest plot of Elo ratings with 95% confidence intervals"),
    "axes": (axes_heatmap, "Heatmap of win rates per HEART axis and overall"),
    "axes-percentile": (
        axes_percentile,
        "Heatmap of each system's percentile per HEART axis from per-axis Bradley–Terry fits",
    ),
    "win-matrix": (win_matrix, "Heatmap of pairwise win rates between systems"),
    "predicted-matrix": (
        predicted_matrix,
        "Heatmap of the win probabilities the Bradley–Terry fit predicts between systems",
    ),
    "strategies": (strategies, "Heatmap of support-strategy usage per system family"),
    "ttft": (elo_vs_ttft, "Scatter of Elo against median time to first token, log scale"),
}


def render(name: str, result: dict[str, Any], fmt: str) -> bytes:
    """Draw plot `name` for `result` and encode it as `fmt` ("svg" or "png")."""
    import matplotlib

    draw, _ = PLOTS[name]
    # A row with too few judgments has no Elo to draw: the figures show the rows the data place.
    placed = [row for row in result.get("systems", []) if row.get("elo") is not None]
    fig = draw(dict(result, systems=placed))
    buffer = io.BytesIO()
    # A fixed hash salt and no date keep SVG output byte-identical for identical input.
    metadata = {"Date": None} if fmt == "svg" else {}
    dpi = PNG_DPI if fmt == "png" else "figure"
    with matplotlib.rc_context({"svg.hashsalt": "heart", "svg.fonttype": "none"}):
        fig.savefig(buffer, format=fmt, metadata=metadata, dpi=dpi)
    return buffer.getvalue()
