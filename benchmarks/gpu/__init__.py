"""The GPU check (issue 47): one command, `scripts/gpu_check.sh`, that measures the runner on whatever
device is present and prints one table (`python -m benchmarks.gpu`, in `__main__`).

It needs torch, transformers, numpy and the repository's files only: the models are built from
configs with seeded random weights (`models`, which also carries the default tokenizer), timed
with the device synchronised (`timing`), against the floors the CPU benchmarks defined (`speed`),
and compared between the device and the CPU in float32 (`fidelity`); `report` holds the table's
rows and goals, and `imports` checks that the check imports nothing a bare machine lacks.
"""
