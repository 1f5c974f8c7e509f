"""Command-line tools: dump, build, samples (the I/O edge of kafkafmt)."""
