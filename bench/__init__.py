"""vnpu's benchmarks: `vnpu bench` (or `python -m bench.run`) measures the figures users judge vnpu by, each as a
ratio against a floor or an alternative measured in the same run (see bench/run.py). `bench/offload.py` is a
stand-alone measurement behind a design choice."""
