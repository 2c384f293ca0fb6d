"""One module per command: run(request) -> result (check inputs, compute, write, stamp the run record)."""
