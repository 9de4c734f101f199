"""A paper's claims as data, checked against an experiment's summary rows.

Each paper declares its claims in its package's claims.py (a tuple of `Claim` per
experiment, given to the experiment as its `claims` class attribute); this package
evaluates them on the experiment's rows (one dict per finished run, the columns of its
summary.csv) and writes claims.json and claims.md. One job per module:

- model.py: rows and their selection, verdicts and modes, tolerances, the check
  interface, `Claim`, `ClaimResult`, `evaluate`/`evaluate_all`, `ClaimReport`;
- measures.py: the numbers a number claim compares (`ColumnMean`,
  `PerGroupComparison` with its aggregation);
- checks.py: the checks papers share (`NumberCheck`, `ExtremePerGroup`, `Monotone`,
  `EveryGroup`, ...);
- report.py: claims.json and claims.md.

Verdicts: PASS, FAIL, NOT RUN (the runs it needs are not on record, or the claim holds
for another mode than the one run; the result says why). Import each name from the
module that defines it.
"""
