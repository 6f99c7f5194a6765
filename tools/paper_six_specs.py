#!/usr/bin/python3
"""The six-rules tables of docs/paper/six-rules.md (LeNet-5 and a TorchScript CNN on
Fashion-MNIST, every rule at K = 4), made from tools/paper_figures.py's CSVs for
tools/paper_tables.py: test error against time, and the time to a target both as the first
snapshot at or under it and as the smoothed crossing (three snapshots' mean)."""

from paper_table_specs import curves_and_targets

SIX, SIXT, SIXS = ("fashion-six-rules.csv", "fashion-six-rules-target.csv",
                   "fashion-six-rules-target-smoothed.csv")
CNN, CNNT, CNNS = ("fashion-six-rules-cnn.csv", "fashion-six-rules-cnn-target.csv",
                   "fashion-six-rules-cnn-target-smoothed.csv")
RUNS = ["sync", "k-sync K=4", "k-batch-sync K=4", "async", "k-async K=4", "k-batch-async K=4"]


def six(curves, first, smoothed):
    """The table of one six-rule race (3 seeds)."""
    return curves_and_targets(curves, first, smoothed, RUNS,
                              ["t=0.5", "t=1", "t=2", "t=5", "t=10", "last quarter"],
                              ["mean of 3 seeds", "test error at 0.5 s", "1 s", "2 s", "5 s",
                               "10 s", "last quarter"], ("0.2", "0.15"), 1)


TABLES = {"fashion-six": six(SIX, SIXT, SIXS), "fashion-six-cnn": six(CNN, CNNT, CNNS)}
