"""The minimums a board states (no imports: the pages read them without loading the maths).

- ``MIN_COMPARISONS``: a row needs this many comparisons for an Elo and an interval; below, it
  is shown as "too few judgments" with its count. At 20 a system's 95% interval is about ±150
  Elo wide (±680/√n near even odds); the coverage simulation
  (`tests/ranking/test_coverage.py`) shows the robust and bootstrap intervals still covering
  there.
- ``MIN_SOURCE_JUDGMENTS``: the combined board ("all judges") needs this many counted
  judgments from each source that judged; with fewer, a handful of verdicts would carry a
  whole source's share of the weight.
"""

MIN_COMPARISONS = 20
MIN_SOURCE_JUDGMENTS = 50
