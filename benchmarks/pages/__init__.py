"""The results pages, README's numbers and their plots, generated from the benchmarks' records."""
