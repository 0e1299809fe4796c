"""Speed and memory benchmarks, each a ratio against a reference measured in the same run."""
