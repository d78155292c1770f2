"""The command line over the library: argument parsing and `main`s, and the named configs."""
