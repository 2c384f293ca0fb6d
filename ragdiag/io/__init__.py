"""Base layer for files: the one atomic writer (refuses to overwrite an input) and the run record."""
