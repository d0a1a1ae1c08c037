"""Metrics computed from the stored texts (score): the text metrics, SERA with its search indexes,
Louis & Nenkova's regression and the sentinel baselines.
"""
