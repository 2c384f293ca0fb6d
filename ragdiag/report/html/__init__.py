"""``ragdiag report``: one self-contained HTML page joining result files (no network: styles,
scripts and images inlined). Inputs are untrusted: every string from them is HTML-escaped."""
