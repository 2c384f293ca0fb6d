"""``ragdiag sweep``: what each ANN operating point costs the answers (paper 000 §5.3)."""
