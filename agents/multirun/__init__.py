"""Tools over many runs: seeds, tuning studies, comparisons and their aggregates."""
