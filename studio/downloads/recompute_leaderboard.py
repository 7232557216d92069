"""Recompute this release's leaderboard from judgments.jsonl alone.

    python recompute_leaderboard.py [--judges all|human|llm] [--check]

Needs Python 3.12+, numpy, scipy and pandas; the Bradley-Terry code and the verdict rule are
the HEART studio `ranking/` modules shipped beside this script. Counted judgments are the
platform's: real pairs (quality_check false) by judges not excluded, under the study's verdict
rule as leaderboard.json records it (an LLM judge's two position-swapped verdicts as two votes
or one consistent verdict; on the all-judges board humans and LLM judges weighed by source);
each verdict weighs by its strength as the recorded parameters say, ties as they say.
With --check, the Elo of every system must match leaderboard.json (exit 1 otherwise).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # the bundled ranking package, before any installed one

import pandas as pd  # noqa: E402

from ranking import bradley_terry, verdicts  # noqa: E402

TOLERANCE = 0.1  # leaderboard.json rounds Elo to 0.1


def counted_judgments(judges: str) -> pd.DataFrame:
    with open(HERE / "judgments.jsonl", encoding="utf-8") as fh:
        frame = pd.DataFrame([json.loads(line) for line in fh if line.strip()])
    if frame.empty:
        return frame
    keep = ~frame["quality_check"].astype(bool) & ~frame["excluded"].astype(bool)
    if judges != "all":
        keep &= frame["judge_kind"] == judges
    return frame[keep]


def leaderboard(judges: str, params: dict) -> pd.DataFrame:
    rule = verdicts.VerdictRule.from_dict(params.get("verdicts"))
    judgments = counted_judgments(judges)
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
    return bradley_terry.fit(
        comparisons,
        ties="half" if params["ties"] == "drop" else params["ties"],
        ci=params["ci"],
        bootstrap_rounds=params["bootstrap_rounds"],
        seed=params["seed"],
        alpha=params["alpha"],
        anchor=params.get("anchor"),
    )


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
        table = leaderboard(judges, released[judges]["params"])
        stored = {row["system"]: row["elo"] for row in released[judges]["systems"]}
        print(f"judges={judges}: {len(table)} systems")
        print(f"{'system':30} {'elo':>8} {'released':>9}")
        for system, row in table.sort_values("elo", ascending=False).iterrows():
            before = stored.get(system)
            same = before is not None and abs(row["elo"] - before) <= TOLERANCE
            mismatches += not same
            mark = "" if same else "  <- differs"
            print(f"{system:30} {row['elo']:8.1f} {before if before is not None else '-':>9}{mark}")
        mismatches += len(set(stored) - set(table.index))
    if args.check:
        print("Elo recomputes: yes" if not mismatches else f"Elo recomputes: NO ({mismatches})")
        return 0 if not mismatches else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
