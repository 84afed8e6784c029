"""`submitter stage`: a fresh submission tree from the best run of each step.

Modules: `staging` (the whole step: choose, copy, check, move into place), `selection` (which runs may be
staged), `documents` (README and measurements files), `sources` (the code that made the runs),
`truncation` (accuracy logs cut to the round's limit).
"""
