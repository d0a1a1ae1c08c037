"""Metrics against humans: correlations (correlate), their intervals (ci) and tests (compare),
evaluate, the metric rankings (winners, accuracy, rank-tasks, replicability), the paper's
simulations (normality, simulate coverage / power), measure-correlation, held-out ties, optimal-set,
error-overlap and the figures of stored cells.
"""
