"""Command-line tools, one module per ``kafkafmt`` command (dump, build, clean, annotate, samples,
warmup, gen, pipeline, explain, scenario, audit): the I/O edge of kafkafmt, registered by
:mod:`kafkafmt.cli`."""
