"""The benchmarks: one command each (`python -m benchmarks.<name>`), its records, their pages."""
