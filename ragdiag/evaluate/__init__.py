"""`ragdiag evaluate`: graded utility and standard metrics of runs, with intervals and attribution."""
