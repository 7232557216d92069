"""Recompute this release's leaderboard from judgments.jsonl alone.

    python recompute_leaderboard.py [--judges all|human|llm] [--check]

Needs Python 3.12+, numpy, scipy and pandas; the Bradley-Terry code and the verdict rule are
the HEART studio `ranking/` modules shipped beside this script. Counted judgments are the
platform's: real pairs (quality_check false) by judges not excluded, under the study's verdict
rule as leaderboard.json records it (an LLM judge's two position-swapped verdicts as two votes
or one consistent verdict; on the all-judges board humans and LLM judges weighed by source);
each verdict weighs by its strength as the recorded parameters say, ties as they say. The
interval is the recorded one: the bootstrap resamples the source conversations clusters.json
names, with the recorded seed and rounds. A system with fewer comparisons than the recorded
minimum (or no finite estimate) has no Elo in leaderboard.json and none here. A system taken
off the board (leaderboard.json's "off_board"; board_history.json says when and why) keeps its
judgments in judgments.jsonl and is left out here as on the board.
With --check, the Elo of every system must match leaderboard.json, and every interval bound
within 0.1 Elo plus four times its stated Monte Carlo error (exit 1 otherwise).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # the bundled ranking package, before any installed one

import pandas as pd  # noqa: E402

from ranking import bradley_terry, verdicts  # noqa: E402

TOLERANCE = 0.1  # leaderboard.json rounds Elo to 0.1


def counted_judgments(judges: str, off_board: list[str] | None = None) -> pd.DataFrame:
    """``off_board``: systems taken off the board (board_history.json says when and why):
    their judgments stay in judgments.jsonl and are left out of the board."""
    with open(HERE / "judgments.jsonl", encoding="utf-8") as fh:
        frame = pd.DataFrame([json.loads(line) for line in fh if line.strip()])
    if frame.empty:
        return frame
    keep = ~frame["quality_check"].astype(bool) & ~frame["excluded"].astype(bool)
    if off_board:
        keep &= ~(frame["system_a"].isin(off_board) | frame["system_b"].isin(off_board))
    if judges != "all":
        keep &= frame["judge_kind"] == judges
    return frame[keep]


def clusters() -> dict[str, str]:
    path = HERE / "clusters.json"
    if not path.exists():
        return {}
    found: dict[str, str] = json.loads(path.read_text(encoding="utf-8"))["clusters"]
    return found


def leaderboard(
    judges: str, params: dict[str, Any], off_board: list[str] | None = None
) -> pd.DataFrame:
    rule = verdicts.VerdictRule.from_dict(params.get("verdicts"))
    judgments = counted_judgments(judges, off_board)
    # A pair is its context and its two systems (the export's canonical orientation).
    judgments = judgments.assign(
        item=judgments["context_id"]
        + "\x1f"
        + judgments["system_a"]
        + "\x1f"
        + judgments["system_b"]
    )
    judgments = verdicts.counted(judgments, rule)
    if params.get("ties") == "drop":
        judgments = judgments[judgments["winner"] != "tie"]
    weight = bradley_terry.strength_weight(
        pd.to_numeric(judgments["strength"], errors="coerce").astype(float),
        pd.to_numeric(judgments["strength_max"], errors="coerce").astype(float),
        params["weights"],
        winner=judgments["winner"],
    )
    if judges == "all" and params.get("combined", "by_count") == "by_source":
        weight = weight * verdicts.source_factors(judgments["judge_kind"], weight, rule)
    comparisons = pd.DataFrame(
        {
            "system_a": judgments["system_a"].to_numpy(),
            "system_b": judgments["system_b"].to_numpy(),
            "winner": judgments["winner"].to_numpy(),
            "weight": weight,
            "context": judgments["context_id"].to_numpy(),
        }
    )
    conversation = clusters()
    if conversation:
        comparisons["cluster"] = comparisons["context"].map(conversation)
    return bradley_terry.fit(
        comparisons,
        ties="half" if params["ties"] == "drop" else params["ties"],
        ci=params["ci"],
        bootstrap_rounds=params["bootstrap_rounds"],
        seed=params["seed"],
        alpha=params["alpha"],
        anchor=params.get("anchor"),
    )


def interval_words(board: dict[str, Any]) -> str:
    interval = board.get("interval") or {}
    return interval.get("label") or str(interval.get("method"))


def compare(system: str, row: pd.Series, released: dict[str, Any] | None) -> int:
    """Print one system's recomputed and released numbers; 1 when they differ."""
    if released is None:
        print(f"{system:30} {row['elo']:8.1f} {'-':>9}  <- not in the release")
        return 1
    if released.get("too_few"):
        print(f"{system:30} {'-':>8} {'-':>9}  too few judgments ({released['n']} comparisons)")
        return int(released["n"] != row["n"])
    same = abs(row["elo"] - released["elo"]) <= TOLERANCE
    slack = TOLERANCE + 4 * (released.get("ci_mc_error") or 0.0)
    for key in ("ci_low", "ci_high"):
        if released.get(key) is not None:
            same = same and abs(row[key] - released[key]) <= slack
    ours = f"[{row['ci_low']:.1f}, {row['ci_high']:.1f}]"
    theirs = f"[{released.get('ci_low')}, {released.get('ci_high')}]"
    mark = "" if same else "  <- differs"
    print(f"{system:30} {row['elo']:8.1f} {released['elo']:9.1f} {ours:>21} {theirs:>21}{mark}")
    return int(not same)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--judges", choices=["all", "human", "llm"])
    parser.add_argument("--check", action="store_true", help="compare with leaderboard.json")
    args = parser.parse_args()
    released = json.loads((HERE / "leaderboard.json").read_text(encoding="utf-8"))
    wanted = [args.judges] if args.judges else list(released) or ["all"]
    mismatches = 0
    for judges in wanted:
        if judges not in released:
            print(f"{judges}: no judgments of this kind in the release")
            continue
        board = released[judges]
        rows = {row["system"]: row for row in board["systems"]}
        print(f"judges={judges}: {len(rows)} systems; interval: {interval_words(board)}")
        if board.get("too_few"):
            print("  too few judgments for this board: the release shows no Elo")
            continue
        table = leaderboard(judges, board["params"], board.get("off_board"))
        print(f"{'system':30} {'elo':>8} {'released':>9} {'interval':>21} {'released':>21}")
        for system, row in table.sort_values("elo", ascending=False).iterrows():
            mismatches += compare(str(system), row, rows.get(str(system)))
        mismatches += len(set(rows) - set(table.index))
    if args.check:
        print("Elo recomputes: yes" if not mismatches else f"Elo recomputes: NO ({mismatches})")
        return 0 if not mismatches else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
