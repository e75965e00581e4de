"""Side-by-side benchmarks: `python -m symmem.bench` runs the same
perftest-style sweeps through symmem and the libraries a user would
otherwise pick (the NVSHMEM C library, NVSHMEM4Py and NCCL on GPUs; NumPy on
the cpu backend), prints tables with ratios and writes JSON and PNG plots."""
